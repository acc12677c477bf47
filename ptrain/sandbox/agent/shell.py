"""The persistent bash session: one command at a time, its output captured, its leftovers killed.

`cd` and `export` carry over between commands; a command that times out is aborted with a trapped
signal, and a shell that exits or does not recover is restarted.
"""

from __future__ import annotations

import os
import select
import signal
import time
import uuid

from .capture import HeadTail
from .processes import kill_tree, reap, shell_exits, shell_pids
from .user import WORKSPACE, as_user, become_user

STATUS_FD = 100  # bash reports "<nonce> <exit code>" on this fd after each command
OUTPUT_FD = 101  # a copy of the output pipe: each command's stdout and stderr are set from it
KILL_GRACE_S = 2.0  # after a timeout kill, how long bash gets to report before it is restarted
# Commands run inside a function so that, on a timeout, SIGUSR1 makes bash `return` from it instead
# of going on with the rest of the command once its children are dead (one function level per signal;
# the agent keeps signalling until the command is over).
PRELUDE = f"""__ptrain_run() {{ builtin eval "$__ptrain_cmd"; }}
trap 'return 124 2>/dev/null' USR1
exec {OUTPUT_FD}>&1
""".encode()


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

    def run(self, command: str, timeout_s: float, max_output_bytes: int, keep: bool = False) -> tuple[dict, bytes]:
        """One command; what it left running is killed, unless `keep` (a verifier starting a task's declared
        services, which the next `run` kills with everything else)."""
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
        # what the command left running (`&`, setsid, a fork loop) dies now, unless it is to be kept
        if not note and not keep and kill_tree(self.pid):
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
