"""Tasks whose agent works as root: the episode's whole container state (packages, /etc, files
outside the workdir, deletions) is what is verified, in a fresh container of the task's image, with
the harness run from the pristine image so nothing the agent planted in the root filesystem runs
inside it. Real podman, a real Harbor task (tests/fixtures/harbor-root/root-state)."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest
from ptrain_terminal_coding import TASKPACK
from ptrain_terminal_coding.harbor import import_tasks, load_imported

from ptrain.errors import ConfigError
from ptrain.sandbox import PoolSet, images
from ptrain.sandbox.agent.files import is_state
from ptrain.sandbox.container import Sandbox, SandboxLimits
from ptrain.taskpack import ToolCall
from ptrain.verify import check_one, replay, verify_artifact

FIXTURES = Path(__file__).parent / "fixtures"

# A root agent's attack on the harness: Python code planted where the state's python3 imports it at
# start (sitecustomize) that forges a sealed report naming every test as passed, writes reward 1 into
# every log directory it finds and exits 0. Under the state's own pytest this earns 1.
FORGE = r"""
import ast, glob, json, os, sys
outcomes = {}
for arg in sys.orig_argv[1:] if "pytest" in sys.orig_argv else []:
    if arg.endswith(".py") and os.path.isfile(arg):
        for node in ast.parse(open(arg).read()).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                outcomes[os.path.abspath(arg) + "::" + node.name] = "passed"
if outcomes:
    try:
        os.write(3, (json.dumps({"outcomes": outcomes, "canary": "failed", "exitstatus": 0}) + "\n").encode())
    except OSError:
        pass
    for logs in glob.glob("/tmp/.ptrain-harness/*/logs/verifier") + ["/logs/verifier"]:
        try:
            open(logs + "/reward.txt", "w").write("1\n")
        except OSError:
            pass
    os._exit(0)
"""
PLANT = (
    f"rm -f /usr/lib/python3.11/sitecustomize.py && cat > /usr/lib/python3.11/sitecustomize.py <<'EOF'\n{FORGE}\nEOF"
)


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    dest = tmp_path_factory.mktemp("imported")
    [result] = import_tasks(FIXTURES / "harbor-root", dest)
    assert result.ok, result.error
    [task] = load_imported(dest)
    return task


@pytest.fixture(scope="module")
async def pools(task, podman_url, base_image):
    images.build_taskpack(TASKPACK.image, podman_url)
    async with PoolSet(size=1, max_active=4, urls=[podman_url]) as pools:
        yield pools


def test_an_imported_task_works_as_root_unless_told_and_declares_its_services(task, tmp_path):
    assert task.image.root and task.metadata["root"]
    assert task.metadata["services"][0].startswith("python3 -m http.server 8099")
    [plain] = import_tasks(FIXTURES / "harbor-root", tmp_path, root=False)
    meta = json.loads((tmp_path / "root-state" / "ptrain-import.json").read_text())
    assert plain.ok and meta["root"] is False and "[ptrain]" not in " ".join(plain.warnings)


def test_state_paths_leave_out_ptrain_the_kernel_and_the_workdir():
    assert is_state("/etc/greeter.conf", "/app") and is_state("/usr/local/bin/greet", "/app")
    for path in ("/opt/ptrain/agent/server.py", "/opt/ptrain/pristine", "/proc/1", "/tmp/x", "/run/ptrain",
                 "/app/notes.txt", "/", "relative"):  # fmt: skip
        assert not is_state(path, "/app"), path
    assert is_state("/application", "/app")  # a prefix of the name is not the directory


async def test_gold_from_the_whole_container_state_scores_one_and_a_no_op_zero(task, pools):
    result = await check_one(TASKPACK, task, pools, probes=False)
    assert (result.gold, result.noop) == (1.0, 0.0), result.problem
    artifact = await replay(TASKPACK, task, TASKPACK.gold(task), pools)
    names = tarfile.open(fileobj=io.BytesIO(artifact)).getnames()
    assert {"rootfs/etc/greeter.conf", "rootfs/usr/local/bin/greet", "rootfs/srv/site/index.html"} <= set(names)
    assert "workspace/README.md" in names and not any(n.startswith("rootfs/opt/ptrain") for n in names)
    state = json.loads(tarfile.open(fileobj=io.BytesIO(artifact)).extractfile("state.json").read())
    assert "/etc/legacy-greeter.conf" in state["deleted"]
    verdict = await verify_artifact(TASKPACK, task, artifact, pools)
    assert verdict.reward == 1.0, verdict.details
    assert verdict.details["isolation"].startswith("weaker: the task's declared services")
    assert verdict.details["state"].endswith("(1 deletions; 0 entries in ptrain's own paths skipped)")


async def test_a_forged_report_planted_in_the_state_s_python_earns_nothing(task, pools):
    calls = [ToolCall("bash", {"command": PLANT, "timeout_s": 60}), ToolCall("submit", {})]
    artifact = await replay(TASKPACK, task, calls, pools)
    assert "rootfs/usr/lib/python3.11/sitecustomize.py" in tarfile.open(fileobj=io.BytesIO(artifact)).getnames()
    verdict = await verify_artifact(TASKPACK, task, artifact, pools)
    assert verdict.reward == 0.0, verdict.details
    assert "FileNotFoundError" in verdict.details["output"]  # the real tests ran: `greet` is not there


async def test_the_state_can_t_reach_ptrain_s_paths_through_a_link(task, pools, podman_url):
    calls = [ToolCall("bash", {"command": "ln -s /opt/ptrain /srv/ptrain && echo x > /root/planted", "timeout_s": 30})]
    artifact = await replay(TASKPACK, task, calls, pools)
    buf = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(artifact)) as src, tarfile.open(fileobj=buf, mode="w") as out:
        for member in src.getmembers():
            out.addfile(member, src.extractfile(member) if member.isreg() else None)
        evil = tarfile.TarInfo("rootfs/srv/ptrain/agent/server.py")  # through the link, into the agent
        evil.size = 4
        out.addfile(evil, io.BytesIO(b"evil"))
    async with pools.sandbox(task.image) as sandbox:
        restored = await sandbox.put_state(task.metadata["workdir"], buf.getvalue())
        agent = await sandbox.exec("head -c 4 /opt/ptrain/agent/server.py; cat /root/planted")
    assert restored["skipped"] == 1 and agent.output.startswith('"""T') and "x" in agent.output


async def test_a_root_sandbox_maps_root_to_an_unprivileged_host_uid_and_hides_the_agent(task, pools):
    async with pools.sandbox(task.image) as sandbox:
        assert sandbox.limits.root
        ids = await sandbox.exec("id -u; cat /proc/self/uid_map; cat /proc/1/environ >/dev/null 2>&1 || echo hidden")
        writable = await sandbox.exec(
            "touch /usr/bin/x && echo rootfs-writable; touch /opt/ptrain/pristine/x || echo ro"
        )
    lines = ids.output.split()
    assert lines[0] == "0" and lines[1:4] == ["0", "200000", "65536"] and "hidden" in ids.output
    assert "rootfs-writable" in writable.output and "ro" in writable.output.split()


async def test_a_root_sandbox_needs_a_local_podman():
    with pytest.raises(ConfigError, match="needs a local podman"):
        await Sandbox.create("localhost/none", url="ssh://example/run/podman.sock", limits=SandboxLimits(root=True))


async def test_the_same_forgery_earns_one_against_a_harness_run_from_the_state(task, pools, monkeypatch):
    """The attack above is real: with the test script and its pytest taken from the agent's state (the
    harness a workspace-only task uses), the planted code forges a full pass."""
    from ptrain_terminal_coding.harbor import verify

    async def from_the_state(sandbox, root, script, workdir, env):
        return ["bash", script], {**env, "HOME": "/root"}

    monkeypatch.setattr(verify, "pristine_harness", from_the_state)
    calls = [ToolCall("bash", {"command": PLANT, "timeout_s": 60}), ToolCall("submit", {})]
    verdict = await verify_artifact(TASKPACK, task, await replay(TASKPACK, task, calls, pools), pools)
    assert verdict.reward == 1.0, verdict.details


async def test_with_no_root_an_import_works_in_the_workdir_as_the_sandbox_user(tmp_path, pools):
    [result] = import_tasks(FIXTURES / "harbor-root", tmp_path, root=False)
    [plain] = load_imported(tmp_path)
    assert result.ok and not plain.image.root
    async with pools.sandbox(plain.image) as sandbox:
        who = await sandbox.exec("id -u; touch /etc/x || echo read-only")
    assert who.output.split()[0] == "1000" and "read-only" in who.output
    # the task's own gold needs root: as the sandbox user it can't pass, and that is the model's 0, not an error
    result = await check_one(TASKPACK, plain, pools, probes=False)
    assert (result.gold, result.noop) == (0.0, 0.0)
