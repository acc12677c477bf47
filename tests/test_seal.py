"""The sandbox boundary, attacked from inside real containers: commands can't reach the exec agent,
nothing a command starts outlives its result, a broken shell recovers, an uncollectable workspace is
refused with a clear error, and the host refuses a reply frame larger than its request allows."""

from __future__ import annotations

import asyncio
import io
import tarfile

import pytest

from ptrain.errors import SandboxError, WorkspaceError
from ptrain.sandbox import Sandbox, SandboxLimits, agent
from ptrain.sandbox.container import SocketTransport

pytestmark = pytest.mark.podman

STEAL_FDS = r"""python3 - <<'EOF'
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
pidfd = libc.syscall(434, 1, 0)  # pidfd_open(the agent)
print("pidfd", "ok" if pidfd >= 0 else errno.errorcode[ctypes.get_errno()])
stolen = []
for fd in range(64):
    got = libc.syscall(438, pidfd, fd, 0)  # pidfd_getfd
    if got >= 0:
        stolen.append(fd)
    elif ctypes.get_errno() != errno.EPERM:
        pass
print("stolen", stolen)
import socket
try:
    socket.socket(socket.AF_UNIX).connect("/run/ptrain/agent.sock")
    print("socket connected")
except OSError as e:
    print("socket", type(e).__name__)
for path in ("/proc/1/fd", "/proc/1/mem", "/proc/1/environ"):
    try:
        os.listdir(path) if path.endswith("fd") else open(path, "rb").read(1)
        print(path, "open")
    except OSError as e:
        print(path, type(e).__name__)
EOF"""


@pytest.fixture
async def sandbox(base_image, podman_url):
    box = await Sandbox.create(base_image, podman_url, limits=SandboxLimits(workspace_mb=1024, artifact_max_mb=16))
    yield box
    await box.close()


async def test_commands_cannot_reach_the_agents_process_fds_or_socket(sandbox):
    out = (await sandbox.exec(STEAL_FDS, timeout_s=30)).output
    assert "stolen []" in out and "socket PermissionError" in out, out
    assert "/proc/1/fd PermissionError" in out and "/proc/1/mem PermissionError" in out, out
    assert (await sandbox.exec("id -u; echo still-here")).output == "1000\nstill-here\n"


async def test_the_shell_recovers_from_closed_standard_streams(sandbox):
    for breaker in ("exec 1>&-; sleep 0.2", "exec 2>&- 0<&-", "exec 1>/dev/null 2>&1", f"exec {agent.STATUS_FD}>&-"):
        result = await sandbox.exec(breaker, timeout_s=10)
        assert result.exit_code == 0 and not result.timed_out, (breaker, result)
        assert (await sandbox.exec("echo out; echo err >&2")).output == "out\nerr\n", breaker


async def test_nothing_a_command_started_outlives_its_result(sandbox):
    fork_loop = (
        "python3 -c 'import os, time\nfor i in range(5):\n  if os.fork() == 0:\n"
        '    time.sleep(0.5); print("child", i, flush=True); os._exit(0)\nos._exit(1)\''
    )
    result = await sandbox.exec(fork_loop, timeout_s=10)
    assert result.exit_code == 1
    detached = (
        "setsid nohup sh -c 'sleep 0.5; echo detached' >/dev/null 2>&1 & "
        "python3 -c 'import ctypes, os, time\nif os.fork() == 0:\n  os.setsid()\n"
        '  ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)\n  time.sleep(0.5); print("undumpable", flush=True)\' & echo started'
    )
    assert (await sandbox.exec(detached, timeout_s=10)).output.startswith("started")
    await asyncio.sleep(1.0)
    nxt = await sandbox.exec("echo next; ps -eo user=,comm= | sort")
    assert nxt.output == "next\nagent    bash\nagent    ps\nagent    sort\nroot     python3\n", nxt.output


async def test_a_workspace_too_large_to_collect_is_a_workspace_error(sandbox):
    await sandbox.exec("truncate -s 50G /workspace/sparse")
    with pytest.raises(WorkspaceError, match="too large"):
        await sandbox.get_tar()
    await sandbox.exec("rm /workspace/sparse; head -c 20M /dev/zero > /workspace/big")
    with pytest.raises(WorkspaceError, match="too large"):
        await sandbox.get_tar()
    assert (await sandbox.exec("echo still-here")).output == "still-here\n"


async def test_a_workspace_of_1500_nested_directories_is_archived_and_restored(sandbox, base_image, podman_url):
    await sandbox.exec("mkdir -p /workspace/d && cd /workspace/d && for i in $(seq 1500); do mkdir a && cd a; done; "
                       "echo bottom > f")  # fmt: skip
    tar = await sandbox.get_tar()
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        assert max(m.name.count("/") for m in archive.getmembers()) == 1502
    fresh = await Sandbox.create(base_image, podman_url)
    try:
        await fresh.put_tar("/workspace", tar)
        out = await fresh.exec("cat $(find /workspace -name f)")
        assert out.output == "bottom\n"
    finally:
        await fresh.close()


async def fake_agent(tmp_path, reply: bytes):
    """A unix-socket peer that answers every request with `reply`, as a hostile agent would."""

    async def answer(reader, writer):
        (n,) = agent.HEADER.unpack(await reader.readexactly(agent.HEADER.size))
        header = agent.decode_header(await reader.readexactly(n))
        await reader.readexactly(header.get("size", 0))
        writer.write(reply)
        await writer.drain()

    path = tmp_path / "agent.sock"
    return await asyncio.start_unix_server(answer, str(path)), path


@pytest.mark.parametrize(
    "reply, error",
    [
        (agent.encode({"exit_code": 0, "timed_out": False}, b"x" * 10_000), "reply of 10000 bytes"),
        (agent.HEADER.pack(1 << 30) + b"{}", "reply header of 1073741824 bytes"),
        (agent.HEADER.pack(16) + b'{"size": "huge"}', "reply of 'huge' bytes"),
    ],
    ids=["body-over-the-cap", "header-of-a-gigabyte", "size-not-a-number"],
)
async def test_the_host_refuses_a_reply_frame_larger_than_the_request_allows(tmp_path, reply, error):
    server, path = await fake_agent(tmp_path, reply)
    transport = SocketTransport(path)
    await transport.connect(5)
    try:
        with pytest.raises(SandboxError, match=error):
            await transport.call({"op": "exec"}, b"", max_reply_bytes=4096)
    finally:
        await transport.close()
        server.close()
