"""One sandbox: an isolated podman container with the exec agent as its main process.

The container has no network, memory/pids/CPU limits, a read-only root filesystem, a size-limited
tmpfs workspace and ptrain's label. A task that asks for it (`SandboxLimits.root`) gets commands that
run as root on a writable root filesystem, inside a user namespace (container root is an unprivileged
host uid; still no network and only the four capabilities), with the image it started from mounted
read-only at /opt/ptrain/pristine for the verifier's harness; its artifact is the container's whole
state (`get_state`: what `podman diff` lists, plus the workdir), restored with `put_state`. Its exec
agent runs as root with four capabilities (setuid, setgid, kill, chown) and runs every command as the
non-root sandbox user, which can reach neither the agent's process nor its socket (see agent/).
Requests go over a unix socket in a bind-mounted directory, or through `podman exec` for remote
hosts (transport.py). The API is async so a scheduler can keep many sandboxes busy.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from ptrain.errors import ConfigError, SandboxError, ToolError, WorkspaceError
from ptrain.sandbox import agent
from ptrain.sandbox.images import AGENT_COMMAND
from ptrain.sandbox.runtime import LABEL, client, default_url, owner_label, podman_cli, socket_dir
from ptrain.sandbox.transport import MAX_REPLY_HEADER_BYTES, ExecTransport, SocketTransport, bounded, in_thread

DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024
FRAME_SLACK_BYTES = 4096  # the cut marker and the agent's notes beside a capped output
AGENT_CAPABILITIES = ["CHOWN", "SETUID", "SETGID", "KILL"]
CALL_CHUNK_BYTES = 64 * 1024  # argv of one `podman exec` holds at most 128 KiB
ROOT_USERNS_HOST_UID = 200_000  # a root sandbox's uid 0 is this host uid (65536 ids mapped), never the host's root
PRISTINE = "/opt/ptrain/pristine"  # a root sandbox's own image, read-only: what the verifier's harness runs from
_pristine_mounts: dict[str, str] = {}  # image -> its host mount point (`podman image mount`), once per process


@dataclass(frozen=True)
class SandboxLimits:
    memory_mb: int = 2048
    cpus: float = 1.0
    pids: int = 512
    workspace_mb: int = 1024
    tmp_mb: int = 256
    user: str = "1000:1000"
    cpuset: str = ""  # host cores the container may use, e.g. "1" or "2-7" (empty: any)
    artifact_max_mb: int = 64  # a workspace larger than this is not collected: the model's failure
    root: bool = False  # commands as root on a writable root filesystem, in a user namespace (a task's choice)


@dataclass(frozen=True)
class RunResult:
    """A program run by `Sandbox.run`: its exit status, its output, and what it wrote to fd 3."""

    exit_code: int
    output: str
    report: bytes
    timed_out: bool = False
    report_bytes: int = 0  # before capping
    duration_s: float = 0.0


@dataclass(frozen=True)
class ExecResult:
    exit_code: int  # 124 when timed out, 128+N when killed by signal N
    output: str  # stdout and stderr interleaved, capped head+tail with a marker
    timed_out: bool = False
    truncated: bool = False
    output_bytes: int = 0  # before capping
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


def pristine_mount(image: str, url: str) -> str:
    """The host path of `image`'s root filesystem (`podman image mount`), mounted once per process."""
    if image not in _pristine_mounts:
        done = podman_cli("image", "mount", image, url=url, check=False)
        if done.returncode != 0 or not done.stdout.strip():
            raise SandboxError(f"podman image mount {image} failed: {done.stderr.strip()[-500:]}")
        _pristine_mounts[image] = done.stdout.strip().splitlines()[-1]
    return _pristine_mounts[image]


@dataclass(eq=False)  # identity semantics: pools keep sandboxes in sets
class Sandbox:
    """A running container and the transport to its exec agent. Create with `Sandbox.create`."""

    container: object
    url: str
    transport: SocketTransport | ExecTransport
    host_dir: Path | None = None
    broken: str | None = None  # why this sandbox can no longer be used, once it can't
    created_s: float = 0.0
    labels: dict = field(default_factory=dict)
    limits: SandboxLimits = field(default_factory=SandboxLimits)

    @property
    def name(self) -> str:
        return self.container.name

    @classmethod
    async def create(
        cls,
        image: str,
        url: str | None = None,
        limits: SandboxLimits = SandboxLimits(),
        labels: dict[str, str] | None = None,
        transport: str = "auto",
        start_timeout_s: float = 30.0,
        workdir: str = "/workspace",
    ) -> Sandbox:
        """Start a container from `image`; `workdir` is its writable tmpfs (image files there are copied up)."""
        started = time.monotonic()
        if not re.fullmatch(r"\d+:\d+", limits.user) or limits.user.startswith("0:"):
            raise ConfigError(f"the sandbox user must be a non-root uid:gid such as 1000:1000, not {limits.user!r}",
                              fix="a task whose agent works as root says so (SandboxLimits.root), not with uid 0")  # fmt: skip
        url = url or default_url()
        local = transport == "socket" or (transport == "auto" and url.startswith("unix://"))
        if limits.root and not local:
            raise ConfigError(f"a root sandbox needs a local podman (its pristine image is bind-mounted): {url}")
        name = f"ptrain-{uuid.uuid4().hex[:12]}"
        mounts = [
            {"type": "tmpfs", "source": "tmpfs", "target": workdir, "size": f"{limits.workspace_mb}m", "chown": True},
            {"type": "tmpfs", "source": "tmpfs", "target": "/tmp", "size": f"{limits.tmp_mb}m", "mode": "1777"},
        ]  # fmt: skip
        host_dir = None
        if local:
            host_dir = socket_dir(name)
            host_dir.mkdir(parents=True)
            host_dir.chmod(0o777)  # the agent runs as a non-root user
            mounts.append({"type": "bind", "source": str(host_dir), "target": "/run/ptrain"})
        else:
            mounts.append({"type": "tmpfs", "source": "tmpfs", "target": "/run/ptrain", "size": "1m", "mode": "1777"})
        root_options = {}
        if limits.root:
            ids = [{"container_id": 0, "host_id": ROOT_USERNS_HOST_UID, "size": 65536}]
            root_options = {"idmappings": {"UIDMap": ids, "GIDMap": ids}, "userns_mode": "private"}
            mounts.append({"type": "bind", "source": await in_thread(pristine_mount, image, url), "target": PRISTINE,
                           "read_only": True, "propagation": "rprivate"})  # fmt: skip
        all_labels = {LABEL: "1", f"{LABEL}.owner": owner_label(), **(labels or {})}
        podman = client(url)
        container = None
        try:
            container = await in_thread(
                podman.containers.create,
                image,
                name=name,
                command=AGENT_COMMAND,
                labels=all_labels,
                network_mode="none",
                mem_limit=f"{limits.memory_mb}m",
                memswap_limit=f"{limits.memory_mb}m",
                cpu_period=100_000,
                cpu_quota=int(limits.cpus * 100_000),
                pids_limit=limits.pids,
                **({"cpuset_cpus": limits.cpuset} if limits.cpuset else {}),
                read_only=not limits.root,
                mounts=mounts,
                cap_drop=["ALL"],
                cap_add=AGENT_CAPABILITIES,
                security_opt=["no-new-privileges"],
                user="0:0",  # the agent; it runs every command as limits.user
                working_dir=workdir,
                environment={"PTRAIN_WORKSPACE": workdir, "PTRAIN_USER": "0:0" if limits.root else limits.user},
                hostname="sandbox",
                stop_timeout=0,
                **root_options,
            )
            await in_thread(container.start)
        except Exception as e:
            if container is not None:  # created, but its start failed or timed out: it must not linger
                with contextlib.suppress(Exception):  # gone already, or left to `ptrain doctor --clean`
                    await in_thread(container.remove, force=True, v=True)
            if host_dir:
                shutil.rmtree(host_dir, ignore_errors=True)
            if isinstance(e, SandboxError):
                raise
            fix = "ptrain images build" if "image not known" in str(e) else "ptrain doctor"
            raise SandboxError(f"could not start a sandbox from {image} on {url}: {e}", fix=fix) from e
        conn = SocketTransport(host_dir / "agent.sock") if local else ExecTransport(container)
        sandbox = cls(container, url, conn, host_dir, labels=all_labels, limits=limits)
        try:
            await conn.connect(start_timeout_s)
        except BaseException:
            await sandbox.close()
            raise
        if host_dir:
            host_dir.chmod(0o755)  # the socket exists: from now on the sandbox can't write to the host
        sandbox.created_s = time.monotonic() - started
        return sandbox

    async def request(
        self, header: dict, payload: bytes = b"", timeout_s: float = 60.0, max_reply_bytes: int = MAX_REPLY_HEADER_BYTES
    ) -> tuple[dict, bytes]:
        """One agent request; an agent that dies, hangs or sends more than `max_reply_bytes` breaks
        the sandbox (SandboxError)."""
        if self.broken:
            raise SandboxError(f"sandbox {self.name} is unusable: {self.broken}")
        try:
            reply, data = await asyncio.wait_for(self.transport.call(header, payload, max_reply_bytes), timeout_s)
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError, OSError, ValueError, SandboxError) as e:
            self.broken = f"the exec agent stopped answering ({type(e).__name__}: {e})"
            raise SandboxError(f"sandbox {self.name}: {self.broken}") from e
        if "error" in reply:
            kind = reply.get("kind")
            error = WorkspaceError if kind == "workspace" else ToolError if kind == "file" else SandboxError
            raise error(reply["error"])
        return reply, data

    async def exec(
        self,
        command: str,
        timeout_s: float = 120.0,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
        keep_running: bool = False,
    ) -> ExecResult:
        """Run `command` in the persistent shell; past `timeout_s` everything it started is killed, and
        what it left running is killed when it ends, unless `keep_running` (a verifier starting a
        task's declared services: the next `run` kills them with everything else)."""
        header = {"op": "exec", "command": command, "timeout_s": timeout_s, "max_output_bytes": max_output_bytes,
                  "keep_running": keep_running}  # fmt: skip
        reply, data = await self.request(header, timeout_s=timeout_s + agent.KILL_GRACE_S + 10,
                                         max_reply_bytes=max_output_bytes + FRAME_SLACK_BYTES)  # fmt: skip
        return ExecResult(
            exit_code=reply["exit_code"],
            output=data.decode("utf-8", errors="replace"),
            timed_out=reply["timed_out"],
            truncated=reply["truncated"],
            output_bytes=reply["output_bytes"],
            duration_s=reply["duration_s"],
        )

    async def write_file(self, path: str, data: bytes | str, mode: int | None = None, as_root: bool = False) -> None:
        """Write a file (relative paths are under the workdir; an existing file keeps its mode unless
        `mode` is given; a new one gets 0o644) as the sandbox user, or as root (`as_root`: a
        verifier's own files, which commands can read but not change). ToolError if it can't be written."""
        data = data.encode() if isinstance(data, str) else data
        if isinstance(self.transport, SocketTransport):
            await self.request({"op": "write", "path": path, "mode": mode, "as_root": as_root}, data)
            return
        for i in range(0, max(len(data), 1), CALL_CHUNK_BYTES):
            header = {"op": "write", "path": path, "mode": mode, "append": i > 0, "as_root": as_root}
            await self.request(header, data[i : i + CALL_CHUNK_BYTES])

    async def read_file(self, path: str, max_bytes: int = 1 << 30, as_root: bool = False) -> bytes:
        """A file's first `max_bytes`, read as the sandbox user (or root, for a verifier's own files)."""
        header = {"op": "read", "path": path, "max_bytes": max_bytes, "as_root": as_root}
        _, data = await self.request(header, max_reply_bytes=max_bytes)
        return data

    async def put_tar(self, path: str, tar: bytes, as_root: bool = False) -> None:
        """Extract a tar archive into `path` (created if missing), as the sandbox user or as root."""
        if isinstance(self.transport, SocketTransport):
            await self.request({"op": "put_tar", "path": path, "as_root": as_root}, tar, timeout_s=300)
            return
        staging = f"/tmp/.ptrain-upload-{uuid.uuid4().hex}.tar"
        await self.write_file(staging, tar, as_root=as_root)
        await self.request({"op": "put_tar", "path": path, "tar_path": staging, "as_root": as_root}, timeout_s=300)
        await self.request({"op": "exec", "command": f"rm -f {staging}", "timeout_s": 10, "max_output_bytes": 1024},
                           max_reply_bytes=1024 + FRAME_SLACK_BYTES)  # fmt: skip

    async def get_tar(self, path: str = ".", max_bytes: int | None = None) -> bytes:
        """A tar archive of `path` (a directory or a file; by default the workdir). Past `max_bytes`
        (the limits' `artifact_max_mb`) it is refused: WorkspaceError, the model's failure."""
        limit = max_bytes if max_bytes is not None else self.limits.artifact_max_mb << 20
        _, data = await self.request({"op": "get_tar", "path": path, "max_bytes": limit}, timeout_s=300,
                                     max_reply_bytes=limit)  # fmt: skip
        return data

    async def get_state(self, workdir: str, max_bytes: int | None = None) -> bytes:
        """A root sandbox's whole state as a tar: every path the container changed, added or deleted
        (`podman diff`) and the workdir. Past `max_bytes` it is refused (WorkspaceError), as `get_tar`."""
        try:
            changes = await in_thread(self.container.diff)
        except Exception as e:
            raise SandboxError(f"podman diff of {self.name} failed: {e}") from e
        limit = max_bytes if max_bytes is not None else self.limits.artifact_max_mb << 20
        header = {"op": "get_state", "changes": [[c["Path"], c["Kind"]] for c in changes or []],
                  "workdir": workdir, "max_bytes": limit, "as_root": True}  # fmt: skip
        _, data = await self.request(header, timeout_s=300, max_reply_bytes=limit)
        return data

    async def put_state(self, workdir: str, tar: bytes) -> dict:
        """Restore a state tar (`get_state`) into this fresh sandbox of the same image, as root; ptrain's
        own paths are never written. Returns {"deleted": n, "skipped": n}."""
        if isinstance(self.transport, SocketTransport):
            reply, _ = await self.request({"op": "put_state", "workdir": workdir, "as_root": True}, tar, timeout_s=300)
            return reply
        staging = f"/tmp/.ptrain-state-{uuid.uuid4().hex}.tar"
        await self.write_file(staging, tar, as_root=True)
        reply, _ = await self.request({"op": "put_state", "workdir": workdir, "tar_path": staging, "as_root": True},
                                      timeout_s=300)  # fmt: skip
        return reply

    async def run(
        self,
        argv: list[str],
        env: dict[str, str],
        cwd: str,
        timeout_s: float,
        max_output_bytes: int = 8192,
        max_report_bytes: int = 1 << 20,
    ) -> RunResult:
        """Run one program as the sandbox user with a private report pipe on fd 3 (a verifier's
        harness). It returns once everything of the sandbox user is dead, so the report is what
        the program wrote, and nothing it started can add to it later."""
        header = {"op": "run", "argv": argv, "env": env, "cwd": cwd, "timeout_s": timeout_s,
                  "max_output_bytes": max_output_bytes, "max_report_bytes": max_report_bytes}  # fmt: skip
        reply, data = await self.request(header, timeout_s=timeout_s + agent.KILL_GRACE_S + 20,
                                         max_reply_bytes=max_output_bytes + max_report_bytes + FRAME_SLACK_BYTES)  # fmt: skip
        n = bounded(reply.get("output_size", 0), len(data), "run output")
        return RunResult(
            exit_code=reply["exit_code"],
            output=data[:n].decode("utf-8", errors="replace"),
            report=data[n:],
            timed_out=reply["timed_out"],
            report_bytes=reply["report_bytes"],
            duration_s=reply["duration_s"],
        )

    async def ping(self) -> dict:
        reply, _ = await self.request({"op": "ping"}, timeout_s=10)  # fmt: skip
        return reply

    async def close(self) -> None:
        """Remove the container (killed at once) and its socket directory. Safe to call twice."""
        await self.transport.close()
        try:
            await in_thread(self.container.remove, force=True, v=True)
        except Exception as e:  # already gone is fine; anything else is left to `ptrain doctor --clean`
            if "no such container" not in str(e).lower() and "404" not in str(e):
                self.broken = self.broken or f"removal failed: {e}"
        if self.host_dir:
            shutil.rmtree(self.host_dir, ignore_errors=True)
        self.broken = self.broken or "closed"
