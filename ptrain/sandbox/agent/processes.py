"""The agent's processes: reaping orphans as PID 1, and finding and killing everything a command started."""

from __future__ import annotations

import os
import signal
import time

from .user import USER

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
