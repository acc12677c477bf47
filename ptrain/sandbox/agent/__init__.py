"""The exec agent: the main process (PID 1) of every ptrain sandbox container.

It keeps one persistent bash session, so `cd` and `export` carry over between commands and a
command costs a pipe write instead of a `podman exec` (milliseconds instead of ~100 ms). The host
talks to it over a unix socket in a bind-mounted directory with a small framed protocol:

    message = 4-byte big-endian length of a JSON header, the header, then header["size"] raw bytes

Requests are `exec`, `write`, `read`, `put_tar`, `get_tar` and `ping`. Every reply carries either
the result or {"error": ..., "kind": ...}. Run with `--call` (request on argv, reply on stdout) it is
the `podman exec` fallback used for remote podman hosts.

The agent is sealed off from the commands it runs. It starts as root with only the capabilities it
needs (setuid, setgid, kill, chown) and runs the shell, every command and every workspace file
operation as the sandbox user (`PTRAIN_USER`, uid:gid): that user can't signal or ptrace the agent,
open its file descriptors (`pidfd_getfd`) or its socket (mode 0600). After each command every
process of the sandbox user except the shell is killed, so nothing a command started outlives its
result; the shell's standard streams are restored around every command, so closing them breaks
nothing. `run` starts one program (a verifier's harness) with a private report pipe on fd 3 and
returns its exit status, output and report only after every process of the sandbox user is dead.
Without root (an old image, or `--call` from `podman exec`) the agent runs everything as itself.

Stdlib only: this package is copied into every image (to /opt/ptrain/agent/, started by
`images.AGENT_COMMAND`), whatever Python packages the image has. Its parts, one concept each:

    wire.py       the framed protocol (shared with the host client, which imports it from here)
    capture.py    head+tail capture of output of any length
    user.py       who runs what, and where: the sandbox user and the workspace
    processes.py  reaping orphans, finding and killing everything a command started
    shell.py      the persistent bash session and one command's run in it
    program.py    `run`: one program with a private report pipe
    files.py      workspace file and tar requests
    server.py     the request loop on the socket, the `--call` fallback and `main`
"""

from .capture import HeadTail, cut_marker
from .shell import KILL_GRACE_S, STATUS_FD
from .wire import HEADER, MAX_HEADER_BYTES, decode_header, encode, read_exact

__all__ = [
    "HEADER",
    "KILL_GRACE_S",
    "MAX_HEADER_BYTES",
    "STATUS_FD",
    "HeadTail",
    "cut_marker",
    "decode_header",
    "encode",
    "read_exact",
]
