"""Hostile commands against real containers.

Each must come back as a typed result (or a typed error) within its timeout, leave the host and
a neighbouring sandbox unaffected, and leave the pool able to serve the next episode.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from ptrain.sandbox import ExecResult, Sandbox, SandboxLimits, SandboxPool
from ptrain.sandbox.agent import KILL_GRACE_S

LIMITS = SandboxLimits(memory_mb=512, pids=128, workspace_mb=64, tmp_mb=16)


@dataclass(frozen=True)
class Hostile:
    command: str
    timeout_s: float
    check: Callable[[ExecResult], bool]


CASES = {
    "fork_bomb": Hostile(":(){ :|:& };: ; sleep 30", 5, lambda r: r.timed_out),
    "fork_loop_in_python": Hostile(
        "python3 -c 'import os\nwhile True:\n  try: os.fork()\n  except OSError: pass'", 5, lambda r: r.timed_out
    ),
    "endless_memory": Hostile(
        "python3 -c 'a = []\nwhile True: a.append(bytearray(10**7))'", 30, lambda r: r.exit_code == 137
    ),
    "fill_the_workspace": Hostile(
        "dd if=/dev/zero of=/workspace/big bs=1M; df -m /workspace | tail -1", 30, lambda r: "No space left" in r.output
    ),
    # the agent's own lines to bash must not call the command's functions (a fork bomb is a function named `:`)
    "shadow_the_builtins": Hostile(
        'for f in : true printf wait read eval; do eval "$f() { echo BOOM; }"; done; sleep 30',
        2,
        lambda r: r.timed_out and "BOOM" not in r.output and "every process the command started was killed" in r.output,
    ),
    "endless_output": Hostile("yes", 3, lambda r: r.timed_out and r.truncated and r.output.startswith("y\ny\n")),
    "sleep_infinity": Hostile("sleep infinity", 2, lambda r: r.timed_out),
    "reach_the_network": Hostile(
        "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 80), timeout=3)' 2>&1 | tail -1; "
        "getent hosts deb.debian.org || echo no-dns",
        20,
        lambda r: "Network is unreachable" in r.output and "no-dns" in r.output,
    ),
    "kill_the_shell": Hostile("kill -9 $$", 5, lambda r: r.exit_code == 137 and "new shell" in r.output),
    # the agent is PID 1 of its namespace: signals from inside can't kill or stop it
    "kill_the_agent": Hostile(
        "kill -9 1; kill -STOP $PPID; kill -9 -1; echo survived", 5, lambda r: r.output.endswith("survived\n")
    ),
    "write_outside_the_workspace": Hostile(
        "for f in /etc/evil /usr/bin/evil /evil /run/ptrain/evil /home/agent/evil; do touch $f 2>&1; done",
        5,
        lambda r: r.output.count("Read-only file system") + r.output.count("Permission denied") == 5,
    ),
    "one_line_of_100_mb": Hostile(
        "head -c 100000000 /dev/zero | tr '\\0' a", 60, lambda r: r.truncated and r.output_bytes == 100_000_000
    ),
    "binary_output": Hostile(
        "head -c 65536 /dev/urandom; printf '\\xff\\xfe\\x00\\x80 tail'",
        5,
        lambda r: r.ok and r.output.endswith(" tail"),
    ),
}


@pytest.fixture(scope="module")
async def pool(base_image, podman_url):
    async with SandboxPool(base_image, size=2, urls=[podman_url], limits=LIMITS) as pool:
        yield pool


@pytest.fixture(scope="module")
async def neighbour(base_image, podman_url):
    box = await Sandbox.create(base_image, podman_url, limits=LIMITS)
    yield box
    await box.close()


@pytest.mark.parametrize("name", list(CASES))
async def test_hostile_command_is_contained(name, pool, neighbour):
    case = CASES[name]
    sandbox = await pool.acquire()
    started = time.monotonic()
    try:
        result = await sandbox.exec(case.command, timeout_s=case.timeout_s, max_output_bytes=4096)
    finally:
        elapsed = time.monotonic() - started
    assert isinstance(result, ExecResult)
    assert case.check(result), result
    assert elapsed < case.timeout_s + KILL_GRACE_S + 5
    assert len(result.output) < 4096 + 200  # characters: each undecodable byte becomes one U+FFFD

    after = await sandbox.exec("echo still-here", timeout_s=30)  # the same sandbox answers again
    assert after.output.endswith("still-here\n")
    assert (await neighbour.exec("echo fine", timeout_s=10)).output == "fine\n"
    await pool.release(sandbox)

    async with pool.sandbox() as fresh:  # the next episode gets a clean container
        check = await fresh.exec("ls -A /workspace; echo ok", timeout_s=10)
        assert check.output == "ok\n"
