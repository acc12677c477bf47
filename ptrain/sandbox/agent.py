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

Stdlib only: this file is copied into every image, whatever Python packages the image has.
"""

from __future__ import annotations

import base64
import io
import json
import os
import select
import signal
import socket
import struct
import sys
import tarfile
import time
import uuid

SOCKET_PATH = "/run/ptrain/agent.sock"
WORKSPACE = os.environ.get("PTRAIN_WORKSPACE", "/workspace")
STATUS_FD = 100  # bash reports "<nonce> <exit code>" on this fd after each command
OUTPUT_FD = 101  # a copy of the output pipe: each command's stdout and stderr are set from it
REPORT_FD = 3  # `run`: the harness writes its report here
MAX_ENTRIES = 200_000  # a workspace with more files and directories than this is not collected
KILL_GRACE_S = 2.0  # after a timeout kill, how long bash gets to report before it is restarted
HEADER = struct.Struct(">I")
MAX_HEADER_BYTES = 1 << 20
# Commands run inside a function so that, on a timeout, SIGUSR1 makes bash `return` from it instead
# of going on with the rest of the command once its children are dead (one function level per signal;
# the agent keeps signalling until the command is over).
PRELUDE = f"""__ptrain_run() {{ builtin eval "$__ptrain_cmd"; }}
trap 'return 124 2>/dev/null' USR1
exec {OUTPUT_FD}>&1
""".encode()


# -- who runs what ----------------------------------------------------------------------------


def sandbox_user() -> tuple[int, int] | None:
    """(uid, gid) that commands run as, or None when the agent is not root and runs them as itself."""
    spec = os.environ.get("PTRAIN_USER", "")
    if os.geteuid() != 0 or not spec:
        return None
    uid, _, gid = spec.partition(":")
    return int(uid), int(gid or uid)


USER = sandbox_user()


class as_user:
    """File operations as the sandbox user (effective ids only; the agent stays root underneath)."""

    def __init__(self, root: bool = False):
        self.drop = USER is not None and not root

    def __enter__(self) -> None:
        if self.drop:
            os.setegid(USER[1])
            os.seteuid(USER[0])

    def __exit__(self, *exc) -> None:
        if self.drop:
            os.seteuid(0)
            os.setegid(0)


def become_user() -> None:
    """In a forked child, before exec: the sandbox user for good (no way back to root)."""
    if USER is not None:
        os.setgroups([])
        os.setgid(USER[1])
        os.setuid(USER[0])


# -- framing (shared with the host client, which imports these) ------------------------------


def encode(header: dict, payload: bytes = b"") -> bytes:
    raw = json.dumps({**header, "size": len(payload)}).encode()
    return HEADER.pack(len(raw)) + raw + payload


def decode_header(raw: bytes) -> dict:
    return json.loads(raw.decode())


def cut_marker(n_cut: int) -> bytes:
    """The text that stands where the middle of a long output was cut."""
    return f"\n[... {n_cut} bytes cut ...]\n".encode()


class HeadTail:
    """Keeps the first and last bytes of a stream of any length in bounded memory."""

    def __init__(self, max_bytes: int):
        self.head_max = max_bytes // 2
        self.tail_max = max_bytes - self.head_max
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_max - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        self.tail += data
        if len(self.tail) > 2 * self.tail_max + 65536:
            del self.tail[: len(self.tail) - self.tail_max]

    @property
    def truncated(self) -> bool:
        return self.total > self.head_max + self.tail_max

    def value(self) -> bytes:
        if not self.truncated:
            return bytes(self.head + self.tail)
        tail = self.tail[len(self.tail) - self.tail_max :] if self.tail_max else b""
        return bytes(self.head) + cut_marker(self.total - len(self.head) - len(tail)) + bytes(tail)


# -- processes --------------------------------------------------------------------------------

shell_exits: dict[int, int] = {}  # shell pid -> its exit code, once reaped
shell_pids: set[int] = set()


def reap(*_args) -> None:
    """As PID 1 we adopt every orphan; reap them all so zombies never eat the pids limit."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid in shell_pids:
            shell_pids.discard(pid)
            shell_exits[pid] = os.waitstatus_to_exitcode(status)


def proc_stat(pid: int) -> tuple[int, int, int] | None:
    """(ppid, session id, real uid) of a live process, or None if it is gone or a zombie. Both files
    are readable whoever owns the process (one that made itself undumpable still shows its uid)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        if fields[0] in (b"Z", b"X"):  # dead, waiting for its parent to reap it: nothing left to kill
            return None
        with open(f"/proc/{pid}/status", "rb") as f:
            uid = next(int(line.split()[1]) for line in f if line.startswith(b"Uid:"))
        return int(fields[1]), int(fields[3]), uid
    except (OSError, IndexError, ValueError, StopIteration):
        return None


def shell_processes(shell_pid: int) -> list[int]:
    """Every process the shell started: its session, descendants that left it, and (when commands
    run as the sandbox user) every process of that user but the shell."""
    stats = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in (os.getpid(), shell_pid):
            st = proc_stat(int(name))
            if st:
                stats[int(name)] = st
    found = {pid for pid, (_, sid, uid) in stats.items() if sid == shell_pid or (USER and uid == USER[0])}
    changed = True
    while changed:
        changed = False
        for pid, (ppid, _, _) in stats.items():
            if pid not in found and (ppid == shell_pid or ppid in found):
                found.add(pid)
                changed = True
    return sorted(found)


def kill_tree(shell_pid: int) -> bool:
    """Kill everything the shell started, repeating until nothing is left (fork bombs).

    The shell and its commands share one process group (no job control), and a group-wide SIGSTOP
    is atomic with respect to fork(): the kernel restarts a fork that races it, so nothing in the
    group can make a new process once it is sent. Processes that left the group (setsid, setpgid)
    are stopped one by one in the loop, which repeats until a scan finds nothing. True if there was
    anything to kill."""
    pids = shell_processes(shell_pid)
    if not pids:
        return False
    try:
        os.killpg(shell_pid, signal.SIGSTOP)
    except OSError:
        pass
    try:
        for _ in range(200):
            pids = shell_processes(shell_pid)
            if not pids:
                return True
            for sig in (signal.SIGSTOP, signal.SIGKILL):
                for pid in pids:
                    try:
                        os.kill(pid, sig)
                    except OSError:
                        pass
            time.sleep(0.005)
            reap()
    finally:
        try:
            os.kill(shell_pid, signal.SIGCONT)
        except OSError:
            pass
    return True


class Shell:
    """One persistent `bash` whose output and status come back on two pipes."""

    def __init__(self, cwd: str = WORKSPACE):
        self.pid = 0
        self.start(cwd)

    def start(self, cwd: str) -> None:
        in_r, self.stdin = os.pipe()
        self.out, out_w = os.pipe()
        self.status, status_w = os.pipe()
        env = {
            "HOME": os.environ.get("HOME", "/tmp"),
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "PAGER": "cat",
            "GIT_PAGER": "cat",
            "PYTHONUNBUFFERED": "1",
        }
        for _ in range(100):  # fork fails while a fork bomb holds every pid
            try:
                pid = os.fork()
                break
            except BlockingIOError:
                time.sleep(0.05)
        else:
            raise OSError("cannot start bash: no process slots left")
        if pid == 0:
            try:
                os.setsid()
                os.dup2(in_r, 0)
                os.dup2(out_w, 1)
                os.dup2(out_w, 2)
                os.dup2(status_w, STATUS_FD)
                become_user()
                os.chdir(cwd if os.path.isdir(cwd) else WORKSPACE)
                os.execve("/bin/bash", ["bash", "--noprofile", "--norc"], env)
            finally:
                os._exit(127)
        shell_pids.add(pid)
        for fd in (in_r, out_w, status_w):
            os.close(fd)
        os.set_blocking(self.out, False)
        self.pid = pid
        os.write(self.stdin, PRELUDE)

    def cwd(self) -> str:
        try:
            with as_user():  # /proc/PID/cwd of another user's process is closed to root without CAP_SYS_PTRACE
                return os.readlink(f"/proc/{self.pid}/cwd")
        except OSError:
            return WORKSPACE

    def restart(self, cwd: str) -> None:
        """Kill the shell and all it started; start a fresh one in `cwd`."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        kill_tree(self.pid)
        shell_exits.pop(self.pid, None)
        for fd in (self.stdin, self.out, self.status):
            os.close(fd)
        self.start(cwd)

    def run(self, command: str, timeout_s: float, max_output_bytes: int) -> tuple[dict, bytes]:
        nonce = uuid.uuid4().hex
        command = command.replace("\0", "")
        script = (
            f"IFS= builtin read -r -d '' __ptrain_cmd <<'__PTRAIN_{nonce}'\n{command}\n__PTRAIN_{nonce}\n"
            # the command's streams come from saved copies (closing them breaks nothing), and it never sees the status fd
            f"__ptrain_run < /dev/null >&{OUTPUT_FD} 2>&{OUTPUT_FD} {STATUS_FD}>&- {OUTPUT_FD}>&-\n"
            f"builtin printf '%s %d\\n' {nonce} $? >&{STATUS_FD}\n"
        ).encode()
        output = HeadTail(max_output_bytes)
        started = time.monotonic()
        deadline = started + timeout_s
        exit_code, timed_out, note = None, False, ""
        try:
            os.write(self.stdin, script)
        except BrokenPipeError:
            pass
        status_buf = b""
        while exit_code is None:
            wait = max(0.0, min(0.05, deadline - time.monotonic()))
            ready, _, _ = select.select([self.out, self.status], [], [], wait)
            if self.out in ready:
                self._drain(output)
            if self.status in ready:
                chunk = os.read(self.status, 4096)
                status_buf += chunk
                for line in status_buf.split(b"\n"):
                    parts = line.split()
                    if len(parts) == 2 and parts[0] == nonce.encode():
                        exit_code = int(parts[1])
                status_buf = status_buf.rsplit(b"\n", 1)[-1]
                if exit_code is not None or chunk:
                    continue
            reap()
            if self.pid in shell_exits:
                self._drain(output)
                code = shell_exits[self.pid]
                exit_code = 128 - code if code < 0 else code
                note = f"the shell exited with status {exit_code}; a new shell was started in {WORKSPACE}"
                self.restart(WORKSPACE)
            elif time.monotonic() >= deadline:
                timed_out, exit_code = True, 124
                note = self._recover_from_timeout(nonce, output)
        if not note and kill_tree(self.pid):  # what the command left running (`&`, setsid, a fork loop) dies now
            self._settle(output)
        self._drain(output)
        if note:
            output.add(f"\n[ptrain: {note}]\n".encode())
        header = {
            "exit_code": exit_code,
            "timed_out": timed_out,
            "truncated": output.truncated,
            "output_bytes": output.total,
            "duration_s": time.monotonic() - started,
        }
        return header, output.value()

    def _drain(self, output: HeadTail) -> None:
        while True:
            try:
                data = os.read(self.out, 65536)
            except BlockingIOError:
                return
            if not data:
                return
            output.add(data)

    def _settle(self, output: HeadTail) -> None:
        """Reap the killed command's jobs inside bash, so its "Killed" notices belong to this output.

        `wait` with no operands returns 0 once every job is reaped, or >128 if a late SIGUSR1 cut it short;
        bash prints the notices of jobs reaped by `wait` before it runs the next line, hence the `true`.
        Everything the agent writes to bash goes through `builtin`: the command may have defined a
        function named `:`, `wait` or `printf` (a fork bomb is a function named `:`)."""
        nonce = uuid.uuid4().hex
        os.write(self.stdin, f"until builtin wait 2>/dev/null; do builtin true; done\nbuiltin true\n"
                             f"builtin printf '%s\\n' {nonce} >&{STATUS_FD}\n".encode())  # fmt: skip
        deadline, status_buf = time.monotonic() + KILL_GRACE_S, b""
        while time.monotonic() < deadline and nonce.encode() not in status_buf:
            ready, _, _ = select.select([self.out, self.status], [], [], 0.05)
            if self.out in ready:
                self._drain(output)
            if self.status in ready:
                status_buf += os.read(self.status, 4096)
        self._drain(output)

    def _recover_from_timeout(self, nonce: str, output: HeadTail) -> str:
        grace = time.monotonic() + KILL_GRACE_S
        while time.monotonic() < grace:
            try:
                os.kill(self.pid, signal.SIGUSR1)  # abort the command (see PRELUDE)...
            except OSError:
                break
            kill_tree(self.pid)  # ...once whatever it is waiting for is dead
            ready, _, _ = select.select([self.out, self.status], [], [], 0.05)
            if self.out in ready:
                self._drain(output)
            if self.status in ready and nonce.encode() in os.read(self.status, 4096):
                kill_tree(self.pid)  # anything that outlived the last pass
                self._settle(output)
                return "timed out; every process the command started was killed"
        self.restart(self.cwd())
        return "timed out; the shell did not recover and was restarted (cwd kept, variables lost)"


# -- requests ---------------------------------------------------------------------------------


def resolve(path: str) -> str:
    return path if os.path.isabs(path) else os.path.join(WORKSPACE, path)


class WorkspaceTooLarge(Exception):
    pass


def tar_tree(root: str, max_bytes: int) -> bytes:
    """A tar of `root` built without recursion (any depth) and refused past `max_bytes`.

    Sizes are checked before anything is read, so a sparse 50 GB file or a 900 MB one costs a
    stat, not the memory of the archive; symlinks are archived as links, never followed."""
    buf = io.BytesIO()
    entries = 0
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        stack = [(root, ".")]
        while stack:
            path, arcname = stack.pop()
            entries += 1
            if entries > MAX_ENTRIES:
                raise WorkspaceTooLarge(f"more than {MAX_ENTRIES} files and directories")
            info = tar.gettarinfo(path, arcname=arcname)
            if info is None:  # a socket: nothing to archive
                continue
            if buf.tell() + info.size > max_bytes:
                raise WorkspaceTooLarge(f"more than {max_bytes} bytes (at {arcname}, {info.size} bytes)")
            if info.isreg():
                with open(path, "rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
            if info.isdir():
                names = sorted(os.listdir(path), reverse=True)
                stack += [(os.path.join(path, n), f"{arcname}/{n}") for n in names]
    if buf.tell() > max_bytes:
        raise WorkspaceTooLarge(f"more than {max_bytes} bytes")
    return buf.getvalue()


def run_program(shell: Shell, header: dict) -> tuple[dict, bytes]:
    """Run one program (argv, env, cwd) as the sandbox user, with a report pipe on fd 3.

    Its output and report come back only after every process of the sandbox user is dead (the
    persistent shell too: it is restarted), so nothing it started can write the report, or
    anything else, after the fact. The report is whatever reached the pipe, capped."""
    argv, env = list(header["argv"]), dict(header.get("env") or {})
    cwd, timeout_s = header.get("cwd") or WORKSPACE, float(header["timeout_s"])
    output, report_max = HeadTail(int(header["max_output_bytes"])), int(header.get("max_report_bytes", 1 << 20))
    out_r, out_w = os.pipe()
    rep_r, rep_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            null = os.open("/dev/null", os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(out_w, 1)
            os.dup2(out_w, 2)
            os.dup2(rep_w, REPORT_FD)
            os.closerange(REPORT_FD + 1, 1 << 16)
            become_user()
            os.chdir(cwd)
            os.execvpe(argv[0], argv, env)
        finally:
            os._exit(127)
    shell_pids.add(pid)
    os.close(out_w)
    os.close(rep_w)
    for fd in (out_r, rep_r):
        os.set_blocking(fd, False)
    report, report_total = bytearray(), 0
    started = time.monotonic()
    deadline, exit_code, timed_out = started + timeout_s, None, False

    def drain(fd: int) -> bool:
        nonlocal report_total
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return True
        if fd == out_r:
            output.add(data)
        else:
            report_total += len(data)
            report.extend(data[: max(0, report_max - len(report))])
        return bool(data)

    open_fds = [out_r, rep_r]
    while exit_code is None:
        ready, _, _ = select.select(open_fds, [], [], max(0.0, min(0.05, deadline - time.monotonic())))
        for fd in ready:
            if not drain(fd):
                open_fds.remove(fd)
        reap()
        if pid in shell_exits:
            code = shell_exits.pop(pid)
            exit_code = 128 - code if code < 0 else code
        elif time.monotonic() >= deadline:
            timed_out, exit_code = True, 124
    kill_tree(shell.pid)  # everything the program started, and the program itself on a timeout...
    shell.restart(WORKSPACE)  # ...and the shell, which the program's processes may have reached
    for _ in range(100):  # every writer is dead: each pipe ends at its EOF
        reap()
        ready, _, _ = select.select(open_fds, [], [], 0.05)
        for fd in ready:
            if not drain(fd):
                open_fds.remove(fd)
        if not open_fds:
            break
    for fd in (out_r, rep_r):
        os.close(fd)
    reply = {
        "exit_code": exit_code,
        "timed_out": timed_out,
        "truncated": output.truncated,
        "output_bytes": output.total,
        "duration_s": time.monotonic() - started,
        "report_bytes": report_total,
        "output_size": len(output.value()),
    }
    return reply, output.value() + bytes(report)


def handle(shell: Shell, header: dict, payload: bytes) -> tuple[dict, bytes]:
    op = header.get("op")
    try:
        if op == "ping":
            return {"pid": os.getpid(), "shell_pid": shell.pid, "cwd": shell.cwd(), "uid": os.getuid(),
                    "user": list(USER) if USER else None}, b""  # fmt: skip
        if op == "exec":
            try:
                return shell.run(header["command"], float(header["timeout_s"]), int(header["max_output_bytes"]))
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
        kind = "workspace" if op == "get_tar" else "file"
        return {"error": f"{type(e).__name__}: {e.strerror or e} ({header.get('path', '')})", "kind": kind}, b""
    except WorkspaceTooLarge as e:
        return {"error": f"the workspace is too large to collect: {e}", "kind": "workspace"}, b""
    except RecursionError as e:
        return {"error": f"the workspace could not be archived: {e}", "kind": "workspace"}, b""
    except (KeyError, ValueError, TypeError, tarfile.TarError) as e:
        return {"error": f"bad {op} request: {type(e).__name__}: {e}", "kind": "request"}, b""


def handle_file(header: dict, payload: bytes) -> tuple[dict, bytes]:
    op = header.get("op")
    if op == "write":
        path = resolve(header["path"])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        existed = os.path.exists(path)
        with open(path, "ab" if header.get("append") else "wb") as f:
            f.write(payload)
        if header.get("mode") is not None or not existed:  # an edit keeps the file's mode
            os.chmod(path, int(header.get("mode") or 0o644))
        return {}, b""
    if op == "read":
        limit = int(header.get("max_bytes", 1 << 30))
        with open(resolve(header["path"]), "rb") as f:
            data = f.read(limit + 1)
        return {"truncated": len(data) > limit}, data[:limit]
    if op == "put_tar":
        dest = resolve(header["path"])
        os.makedirs(dest, mode=int(header.get("dir_mode", 0o777)), exist_ok=True)
        source = open(header["tar_path"], "rb") if "tar_path" in header else io.BytesIO(payload)
        with source, tarfile.open(fileobj=source) as tar:
            # "tar": no absolute or ../ member names, but symlinks restore as they were made
            tar.extractall(dest, **({"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}))
        return {}, b""
    if op == "get_tar":
        return {}, tar_tree(resolve(header["path"]), int(header.get("max_bytes", 1 << 30)))
    return {"error": f"unknown request {op!r}", "kind": "request"}, b""


def read_exact(conn: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = conn.recv(min(n - got, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def serve(path: str) -> None:
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


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--call":
        call(sys.argv[2], SOCKET_PATH)
    else:
        serve(SOCKET_PATH)
