"""A sandbox against real podman: the persistent shell, files, tars, isolation, both transports."""

from __future__ import annotations

import io
import tarfile
import uuid

import pytest

from ptrain.errors import ConfigError, SandboxError, ToolError
from ptrain.sandbox import Sandbox, SandboxLimits
from ptrain.sandbox.runtime import client


@pytest.fixture(params=["socket", "exec"])
async def sandbox(request, base_image, podman_url):
    box = await Sandbox.create(base_image, podman_url, transport=request.param)
    yield box
    await box.close()


async def test_cd_and_exported_variables_persist_between_commands(sandbox):
    await sandbox.exec("mkdir -p /workspace/a/b && cd /workspace/a/b && export GREETING=hi && LOCAL=1")
    result = await sandbox.exec("pwd; echo $GREETING $LOCAL")
    assert result.output == "/workspace/a/b\nhi 1\n"
    assert result.ok


async def test_exit_code_and_stderr_come_back(sandbox):
    result = await sandbox.exec("echo out; echo err >&2; exit_code() { return 3; }; exit_code")
    assert result.exit_code == 3
    assert result.output == "out\nerr\n"


async def test_a_syntax_error_is_an_ordinary_failed_command(sandbox):
    result = await sandbox.exec('echo "unterminated')
    assert result.exit_code == 2 and "unexpected EOF" in result.output
    assert (await sandbox.exec("echo fine")).output == "fine\n"


async def test_commands_do_not_read_the_shells_input(sandbox):
    result = await sandbox.exec("cat; echo after", timeout_s=5)
    assert result.output == "after\n" and not result.timed_out


async def test_timeout_kills_the_command_and_keeps_the_session(sandbox):
    await sandbox.exec("cd /tmp && export KEEP=yes")
    result = await sandbox.exec("sleep 60 & sleep 60; echo never", timeout_s=1)
    assert result.timed_out and result.exit_code == 124
    assert "never" not in result.output
    after = await sandbox.exec("pwd; echo $KEEP; ps -eo comm | grep -c sleep")
    assert after.output == "/tmp\nyes\n0\n"


async def test_a_busy_shell_builtin_loop_is_interrupted_and_the_session_kept(sandbox):
    await sandbox.exec("cd /tmp && export KEEP=yes")
    result = await sandbox.exec("while :; do :; done; echo never", timeout_s=1)
    assert result.timed_out and "never" not in result.output
    assert (await sandbox.exec("pwd; echo $KEEP")).output == "/tmp\nyes\n"


async def test_a_shell_that_ignores_the_abort_is_restarted_in_the_same_directory(sandbox):
    await sandbox.exec("cd /tmp")
    result = await sandbox.exec("trap '' USR1; while :; do :; done", timeout_s=1)
    assert result.timed_out and "restarted" in result.output
    assert (await sandbox.exec("pwd")).output == "/tmp\n"


async def test_long_output_is_capped_head_and_tail_with_a_marker(sandbox):
    result = await sandbox.exec("seq 1 100000", max_output_bytes=1000)
    assert result.truncated and result.output_bytes == len("\n".join(map(str, range(1, 100001)))) + 1
    assert result.output.startswith("1\n2\n3\n") and result.output.endswith("99999\n100000\n")
    assert "bytes cut ...]" in result.output


async def test_files_round_trip_and_relative_paths_land_in_the_workspace(sandbox):
    payload = bytes(range(256)) * 1000  # binary, larger than one exec-transport chunk
    await sandbox.write_file("dir/data.bin", payload)
    assert await sandbox.read_file("/workspace/dir/data.bin") == payload
    assert (await sandbox.exec("wc -c < /workspace/dir/data.bin")).output.strip() == str(len(payload))


async def test_reading_a_missing_file_is_a_tool_error(sandbox):
    with pytest.raises(ToolError, match="No such file"):
        await sandbox.read_file("nope.txt")


async def test_tar_put_and_get_round_trip(sandbox):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in {"src/main.py": b"print('hi')\n", "README": b"readme\n"}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    await sandbox.put_tar("/workspace/proj", buf.getvalue())
    assert (await sandbox.exec("cd /workspace/proj && python3 src/main.py")).output == "hi\n"
    with tarfile.open(fileobj=io.BytesIO(await sandbox.get_tar("/workspace/proj"))) as tar:
        names = sorted(m.name for m in tar.getmembers() if m.isfile())
    assert names == ["./README", "./src/main.py"]


async def test_the_sandbox_is_locked_down(sandbox):
    result = await sandbox.exec(
        "id -u; ls /sys/class/net; grep CapEff /proc/self/status; touch /usr/x 2>&1; touch /x 2>&1; "
        "cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max"
    )
    lines = result.output.splitlines()
    assert lines[0] == "1000"  # non-root
    assert lines[1] == "lo"  # no network but loopback
    assert lines[2].split()[1] == "0000000000000000"  # no capabilities
    assert "Read-only file system" in lines[3] and "Read-only file system" in lines[4]
    assert lines[5] == str(SandboxLimits().pids)


async def test_closing_removes_the_container(base_image, podman_url):
    box = await Sandbox.create(base_image, podman_url)
    name = box.name
    await box.close()
    await box.close()  # twice is fine
    assert not client(podman_url).containers.exists(name)
    with pytest.raises(SandboxError, match="unusable"):
        await box.exec("true")


async def test_a_missing_image_is_a_sandbox_error_with_a_fix(podman_url):
    with pytest.raises(SandboxError, match="could not start a sandbox") as info:
        await Sandbox.create("localhost/ptrain-no-such-image:0", podman_url)
    assert info.value.fix == "ptrain images build"


async def test_a_container_whose_agent_never_comes_up_is_removed_not_left_behind(base_image, podman_url):
    mark = {"ptrain.test": uuid.uuid4().hex}
    with pytest.raises(SandboxError, match="did not come up"):  # created and started; one pid is too few for its shell
        await Sandbox.create(base_image, podman_url, limits=SandboxLimits(pids=1), labels=mark, start_timeout_s=3)
    left = client(podman_url).containers.list(all=True, filters={"label": f"ptrain.test={mark['ptrain.test']}"})
    assert left == []


async def test_a_sandbox_user_that_is_not_uid_colon_gid_is_a_config_error(base_image, podman_url):
    with pytest.raises(ConfigError, match="uid:gid"):
        await Sandbox.create(base_image, podman_url, limits=SandboxLimits(user="nosuchuser"))


async def test_a_dead_container_is_a_sandbox_error_not_a_hang(sandbox):
    sandbox.container.kill(signal="SIGKILL")
    with pytest.raises(SandboxError):
        await sandbox.exec("echo hi", timeout_s=5)
    with pytest.raises(SandboxError, match="unusable"):
        await sandbox.exec("echo hi")


async def test_symlinks_in_a_workspace_tar_restore_as_they_were(sandbox):
    await sandbox.exec(
        "mkdir -p /workspace/l && cd /workspace/l && echo x > f && ln -s /workspace/l/f abs && ln -s f rel"
    )
    tar = await sandbox.get_tar("/workspace/l")
    await sandbox.put_tar("/workspace/copy", tar)
    result = await sandbox.exec("readlink /workspace/copy/abs /workspace/copy/rel; cat /workspace/copy/rel")
    assert result.output == "/workspace/l/f\nf\nx\n"
