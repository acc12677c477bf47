"""The agent's main loop: requests on the unix socket, each dispatched to its handler.

`main` serves the socket as PID 1; with `--call` (request on argv, reply on stdout) it is the
`podman exec` fallback that forwards one request to the running agent, for remote podman hosts.
"""

from __future__ import annotations

import base64
import bz2  # noqa: F401  (tarfile imports these lazily: loaded now, before a root agent can replace them)
import ctypes
import gzip  # noqa: F401
import lzma  # noqa: F401
import os
import signal
import socket
import sys
import tarfile

from .files import WorkspaceTooLarge, handle_file
from .processes import reap
from .program import run_program
from .shell import Shell
from .user import USER, WORKSPACE, as_user
from .wire import HEADER, MAX_HEADER_BYTES, decode_header, encode, read_exact

SOCKET_PATH = "/run/ptrain/agent.sock"


def handle(shell: Shell, header: dict, payload: bytes) -> tuple[dict, bytes]:
    op = header.get("op")
    try:
        if op == "ping":
            return {"pid": os.getpid(), "shell_pid": shell.pid, "cwd": shell.cwd(), "uid": os.getuid(),
                    "user": list(USER) if USER else None}, b""  # fmt: skip
        if op == "exec":
            try:
                return shell.run(
                    header["command"],
                    float(header["timeout_s"]),
                    int(header["max_output_bytes"]),
                    keep=bool(header.get("keep_running")),
                )
            except OSError as e:  # the shell itself could not be run: not the command's fault
                return {"error": f"shell failure: {e}", "kind": "shell"}, b""
        if op == "run":
            try:
                return run_program(shell, header)
            except OSError as e:
                return {"error": f"could not run {header.get('argv')}: {e}", "kind": "shell"}, b""
        with as_user(root=bool(header.get("as_root"))):  # the harness's own files are root's
            return handle_file(header, payload)
    except OSError as e:
        kind = "workspace" if op in ("get_tar", "get_state") else "file"
        return {"error": f"{type(e).__name__}: {e.strerror or e} ({header.get('path', '')})", "kind": kind}, b""
    except WorkspaceTooLarge as e:
        return {"error": f"the workspace is too large to collect: {e}", "kind": "workspace"}, b""
    except RecursionError as e:
        return {"error": f"the workspace could not be archived: {e}", "kind": "workspace"}, b""
    except (KeyError, ValueError, TypeError, tarfile.TarError) as e:
        return {"error": f"bad {op} request: {type(e).__name__}: {e}", "kind": "request"}, b""


def undumpable() -> None:
    """Commands that run as root (a task that asks for it) can't ptrace the agent or open its memory and fds."""
    try:
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
    except (OSError, AttributeError):
        pass


def serve(path: str) -> None:
    undumpable()
    signal.signal(signal.SIGCHLD, reap)
    os.makedirs(WORKSPACE, exist_ok=True)
    if USER is not None:  # the workspace tmpfs (and the image's files in it) are root's: hand them over
        os.setgroups([])
        for top, _dirs, files in os.walk(WORKSPACE):
            for name in [top, *(os.path.join(top, n) for n in files)]:
                os.lchown(name, *USER)
    shell = Shell()
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path + ".tmp")
    os.chmod(path + ".tmp", 0o600 if USER is not None else 0o666)  # the sandbox user must not connect
    os.rename(path + ".tmp", path)  # the host polls for the socket: it appears ready or not at all
    server.listen(8)
    while True:
        conn, _ = server.accept()
        with conn:
            try:
                while True:
                    (n,) = HEADER.unpack(read_exact(conn, HEADER.size))
                    if n > MAX_HEADER_BYTES:
                        break
                    header = decode_header(read_exact(conn, n))
                    payload = read_exact(conn, int(header.get("size", 0)))
                    reply, data = handle(shell, header, payload)
                    conn.sendall(encode(reply, data))
            except (EOFError, ConnectionError, ValueError):
                pass


def call(request_b64: str, path: str) -> None:
    """`podman exec` fallback: forward one request to the running agent, print the reply."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    conn.sendall(base64.b64decode(request_b64))
    (n,) = HEADER.unpack(read_exact(conn, HEADER.size))
    raw = read_exact(conn, n)
    payload = read_exact(conn, int(decode_header(raw).get("size", 0)))
    sys.stdout.buffer.write(base64.b64encode(HEADER.pack(n) + raw + payload))


def main() -> None:
    """The container's command (`images.AGENT_COMMAND`), with `--call <request>` appended for the fallback."""
    if len(sys.argv) == 3 and sys.argv[1] == "--call":
        call(sys.argv[2], SOCKET_PATH)
    else:
        serve(SOCKET_PATH)
