"""`run`: one program (a verifier's harness) as the sandbox user, with a private report pipe on fd 3."""

from __future__ import annotations

import os
import select
import time

from .capture import HeadTail
from .processes import kill_tree, reap, shell_exits, shell_pids
from .shell import Shell
from .user import WORKSPACE, become_user

REPORT_FD = 3  # `run`: the harness writes its report here


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
