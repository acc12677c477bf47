"""How the host talks to a sandbox's exec agent: framed requests over its unix socket, or one
`podman exec` of the agent in `--call` mode per request (remote podman hosts). The host trusts no
reply frame further than the request allows: a header over 64 KiB or a body over the request's own
cap is a SandboxError. Blocking podman calls run in a thread pool (`in_thread`).
"""

from __future__ import annotations

import asyncio
import base64
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ptrain.errors import SandboxError
from ptrain.sandbox import agent
from ptrain.sandbox.images import AGENT_COMMAND

MAX_REPLY_HEADER_BYTES = 64 * 1024
_podman_threads = ThreadPoolExecutor(max_workers=32, thread_name_prefix="ptrain-podman")


async def in_thread(fn, *args, **kwargs):
    return await asyncio.get_running_loop().run_in_executor(_podman_threads, lambda: fn(*args, **kwargs))


def bounded(n: object, limit: int, what: str) -> int:
    """`n` if it is a size within `limit`; else SandboxError, before a byte of it is read."""
    if not isinstance(n, int) or not 0 <= n <= limit:
        raise SandboxError(f"the exec agent sent a {what} of {n!r} bytes, more than this request allows ({limit})")
    return n


class SocketTransport:
    """Framed requests over the agent's unix socket, one at a time."""

    def __init__(self, path: Path):
        self.path = path
        self.lock = asyncio.Lock()
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def connect(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.reader, self.writer = await asyncio.open_unix_connection(str(self.path))
                return
            except (FileNotFoundError, ConnectionRefusedError) as e:
                if time.monotonic() > deadline:
                    raise SandboxError(f"exec agent did not come up at {self.path}: {e}") from e
                await asyncio.sleep(0.002)

    async def call(self, header: dict, payload: bytes, max_reply_bytes: int) -> tuple[dict, bytes]:
        async with self.lock:
            self.writer.write(agent.encode(header, payload))
            await self.writer.drain()
            (n,) = agent.HEADER.unpack(await self.reader.readexactly(agent.HEADER.size))
            reply = agent.decode_header(
                await self.reader.readexactly(bounded(n, MAX_REPLY_HEADER_BYTES, "reply header"))
            )
            return reply, await self.reader.readexactly(bounded(reply.get("size", 0), max_reply_bytes, "reply"))

    async def close(self) -> None:
        if self.writer:
            self.writer.close()


class ExecTransport:
    """Each request is one `podman exec <AGENT_COMMAND> --call <request>` (remote hosts)."""

    def __init__(self, container):
        self.container = container

    async def connect(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                await self.call({"op": "ping"}, b"", MAX_REPLY_HEADER_BYTES)
                return
            except SandboxError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.05)

    async def call(self, header: dict, payload: bytes, max_reply_bytes: int) -> tuple[dict, bytes]:
        request = base64.b64encode(agent.encode(header, payload)).decode()
        try:
            code, out = await in_thread(self.container.exec_run, [*AGENT_COMMAND, "--call", request], demux=True)
        except Exception as e:  # the container is gone or podman failed
            raise SandboxError(f"podman exec failed: {e}") from e
        stdout, stderr = out if isinstance(out, tuple) else (out, b"")
        if code != 0:
            raise SandboxError(f"podman exec of the agent failed ({code}): {(stderr or b'').decode()[-500:]}")
        raw = base64.b64decode(stdout or b"")
        (n,) = agent.HEADER.unpack(raw[: agent.HEADER.size])
        reply = agent.decode_header(
            raw[agent.HEADER.size : agent.HEADER.size + bounded(n, MAX_REPLY_HEADER_BYTES, "reply header")]
        )
        body = raw[agent.HEADER.size + n :]
        return reply, body[: bounded(len(body), max_reply_bytes, "reply")]

    async def close(self) -> None:
        pass
