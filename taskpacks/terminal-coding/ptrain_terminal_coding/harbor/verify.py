"""Verifying an imported task: the converted test script run sealed, and its reward read as Harbor reads it.

The workspace is restored first; only then does the harness enter, as root's files under
`/tmp/.ptrain-harness` (mode 0711: the sandbox user can pass through it but not list it, so no glob
finds it) in a directory with a random name: the tests (read-only to the sandbox user), ptrain's
pytest seal (seal.py), and logs/verifier, the one directory the test script may write. The script
runs through `Sandbox.run`, as the sandbox user, and the run returns only once every process of
that user is dead, so nothing the script or the code under test started writes anything after it.

The reward is Harbor's: `reward.json`'s `reward` key, else `reward.txt`; no reward (or one that is
not a number) is a 0 saying why. The test script's exit code decides only for the Terminal-Bench 1
layout, which has no reward files, and `reward_from` says so. When pytest ran, the reward must agree
with its sealed report (seal.agree): a reward of 1 with failed tests, or a canary that passed, is 0.

A task whose agent works as root (imported Harbor tasks, as Terminal-Bench runs them) is verified
from the episode's whole container state, restored into a fresh container of its image: packages it
installed, /etc it changed, files outside the workdir are there. Everything on that root filesystem
is the agent's then, so the harness trusts none of it: the test script runs under the image's own
bash and its pytest (`pytest`, `python3 -m pytest`, `uvx ... pytest`, `uv run ... pytest`) under the
image's own Python, both from the pristine image mounted read-only at /opt/ptrain/pristine with their
own loader and libraries; the state's site-packages and the workdir come after the image's on
sys.path. Services a task declares (`services` in its metadata) are started from the state before the
tests, and the verdict says the isolation is weaker: they run as root beside the harness.
"""

from __future__ import annotations

import io
import json
import math
import re
import shlex
import tarfile
import uuid
from collections.abc import Mapping

from ptrain.errors import SandboxError, ToolError
from ptrain.sandbox.container import PRISTINE, Sandbox
from ptrain.taskpack import Task, Verdict
from ptrain_terminal_coding.harbor import seal
from ptrain_terminal_coding.harbor.imported import VERIFY_ROOT
from ptrain_terminal_coding.harbor.spec import test_timeout_cap_s
from ptrain_terminal_coding.verifier import GIT_SAFE, PATH, PLUGIN

HARNESS_ROOT = "/tmp/.ptrain-harness"  # root's, 0711: traversable, not listable, by the sandbox user
REWARD_FILES = ("reward.json", "reward.txt")  # Harbor's order
MAX_REWARD_BYTES = 65536
BASE_ENV = {"PATH": PATH, "HOME": "/home/agent", "LANG": "C.UTF-8", "TERM": "dumb", "PYTHONUNBUFFERED": "1"}
LOADER = f"{PRISTINE}/lib64/ld-linux-x86-64.so.2"
LIBRARY_PATH = f"{PRISTINE}/lib/x86_64-linux-gnu:{PRISTINE}/usr/lib/x86_64-linux-gnu"
STATE_SITE = ["/usr/local/lib/python3.11/dist-packages", "/usr/lib/python3/dist-packages"]
# The test script of a root task, run by the pristine bash: its pytest, however it is asked for, is the
# pristine image's, with ptrain's seal first on sys.path and the agent's state after the image's own.
PRISTINE_SHELL = r"""# ptrain: the test script's pytest runs from the task's pristine image, not the agent's state
__ptrain_pytest() {
    "$__PTRAIN_LOADER" --library-path "$__PTRAIN_LIBS" "$__PTRAIN_PRISTINE/usr/bin/python3" -I -c \
        'import sys; sys.path[:0] = [sys.argv.pop(1)]; sys.path += sys.argv.pop(1).split(":"); import pytest; sys.exit(pytest.main())' \
        "$__PTRAIN_SEAL" "$__PTRAIN_STATE_PATH" "$@"
}
pytest() { __ptrain_pytest "$@"; }
__ptrain_python() {  # python3 [-P -B -X opt ...] -m pytest ARGS: the pristine pytest; anything else: the state's
    local py=$1; shift; local args=("$@")
    while [ $# -gt 0 ]; do
        case $1 in
            -m) [ "${2:-}" = pytest ] && { shift 2; __ptrain_pytest "$@"; return; }; break;;
            -X|-W) shift 2;;
            -c|-) break;;
            -*) shift;;
            *) break;;
        esac
    done
    command $py "${args[@]}"
}
python3() { __ptrain_python python3 "$@"; }
python() { __ptrain_python python "$@"; }
__ptrain_tool() {  # uvx/uv run [options] pytest ARGS: the options pick packages the image already has
    local tool=$1; shift; local args=("$@")
    while [ $# -gt 0 ]; do
        case $1 in
            pytest) shift; __ptrain_pytest "$@"; return;;
            python|python3) local py=$1; shift; __ptrain_python "$py" "$@"; return;;
            --with|-w|--python|-p|--from|--with-requirements|--index|--default-index|-i|--index-url|--find-links|-f) shift 2;;
            -*) shift;;
            *) break;;
        esac
    done
    command $tool "${args[@]}"
}
uvx() { __ptrain_tool uvx "$@"; }
uv() { if [ "${1:-}" = run ] || [ "${1:-}" = tool ]; then local sub=$1; shift; [ "$sub" = tool ] && [ "${1:-}" = run ] && shift; __ptrain_tool "uv $sub" "$@"; else command uv "$@"; fi; }
source "$__PTRAIN_SCRIPT"
"""


def harness_tar(root: str, tests: Mapping[str, bytes], canary: str, user: tuple[int, int]) -> bytes:
    """The harness under HARNESS_ROOT: `<key>/tests`, `<key>/seal` root's, `<key>/logs/{verifier,agent}` the user's."""
    key = root.removeprefix(HARNESS_ROOT + "/")
    plugin = {f"{key}/seal/{seal.MODULE}.py": PLUGIN.format(canary=canary).encode()}
    dirs = {".": (0o711, (0, 0)), key: (0o755, (0, 0)), f"{key}/logs": (0o755, (0, 0)),
            f"{key}/logs/verifier": (0o700, user), f"{key}/logs/agent": (0o700, user)}  # fmt: skip
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, (mode, (uid, gid)) in dirs.items():
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.uid, info.gid = tarfile.DIRTYPE, mode, uid, gid
            tar.addfile(info)
        for name, data in sorted({**{f"{key}/tests/{p}": d for p, d in tests.items()}, **plugin}.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o755 if name.endswith(".sh") else 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def expand(env: Mapping[str, str], base: Mapping[str, str]) -> dict[str, str]:
    """The image's ENV with `$VAR` and `${VAR}` expanded from what came before, as Docker expands them."""
    out = dict(base)
    for k, v in env.items():
        if re.fullmatch(r"[A-Za-z_]\w*", k):
            out[k] = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: out.get(m.group(1) or m.group(2), ""), v)
    return out


def test_env(meta: dict, root: str) -> dict[str, str]:
    env = expand(meta.get("image_env", {}), BASE_ENV)
    env.update(GIT_SAFE, TEST_DIR=f"{root}/tests", T_BENCH_TEST_DIR=f"{root}/tests")
    # no bytecode written (a pycache prefix would recompile the standard library into it: tests whose
    # audit hooks refuse os.rename then fail); what is read is root's, or the code under test's own
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTEST_ADDOPTS="-p no:cacheprovider")
    env.update({k: v.replace(VERIFY_ROOT, root) for k, v in meta["env"].items()})
    env["PYTHONPATH"] = ":".join(p for p in (f"{root}/seal", env.get("PYTHONPATH")) if p)
    env["PYTEST_PLUGINS"] = ",".join(p for p in (seal.MODULE, env.get("PYTEST_PLUGINS")) if p)
    return env


async def verify_imported(task: Task, artifact: bytes, sandbox: Sandbox, version: str) -> Verdict:
    """Restore the workspace (or a root task's whole container state), only then bring the harness in,
    run the test script sealed; read the reward."""
    meta, workdir = task.metadata, task.metadata["workdir"]
    root_task = bool(meta.get("root"))
    if root_task and not sandbox.limits.root:
        raise SandboxError(f"task {task.id} is verified from its container state: it needs a root sandbox")
    cleared = await sandbox.exec(f"find {shlex.quote(workdir)} -mindepth 1 -delete", timeout_s=60)
    if not cleared.ok:  # the image's files are in the fresh workdir: clear them so deletions count too
        raise SandboxError(f"could not clear {workdir} before restoring task {task.id}: {cleared.output[-500:]}")
    state: dict = {}
    try:
        if root_task:
            state = await sandbox.put_state(workdir, artifact)
        else:
            await sandbox.put_tar(workdir, artifact)
    except ToolError as e:  # the model's workspace, which it made unrestorable: its failure
        return Verdict(0.0, False, {"reason": f"the {'state' if root_task else 'workspace'} could not be restored: {e}"},
                       version)  # fmt: skip
    key = uuid.uuid4().hex
    root, canary = f"{HARNESS_ROOT}/{key}", f"test_ptrain_canary_{key[:12]}"
    tests = {}
    for rel, data in meta["tests"].items():
        try:
            tests[rel] = data.decode().replace(VERIFY_ROOT, root).encode()
        except UnicodeDecodeError:
            tests[rel] = data
    uid, _, gid = "0:0".partition(":") if root_task else sandbox.limits.user.partition(":")
    await sandbox.put_tar(HARNESS_ROOT, harness_tar(root, tests, canary, (int(uid), int(gid or uid))), as_root=True)
    script = f"{root}/tests/{meta['test_script']}"
    cap = test_timeout_cap_s()
    timeout_s = min(float(meta["timeout_s"]), cap)
    details: dict = {}
    env, argv = test_env(meta, root), ["bash", script]
    if root_task:
        argv, env = await pristine_harness(sandbox, root, script, workdir, env)
        details["state"] = f"the episode's whole container state ({state.get('deleted', 0)} deletions; " \
                           f"{state.get('skipped', 0)} entries in ptrain's own paths skipped)"  # fmt: skip
        details["isolation"] = await start_services(sandbox, meta.get("services") or [], details)
    run = await sandbox.run(argv, env, cwd=workdir, timeout_s=timeout_s)
    details.update(exit_code=run.exit_code, output=run.output[-4000:])
    details.update(timeout_s=timeout_s, timeout_cap_s=cap, task_timeout_s=float(meta["timeout_s"]))
    found = await reward_files(sandbox, f"{root}/logs/verifier")
    reward = harbor_reward(found, meta["layout"], run.exit_code, details)
    if seal.runs_pytest(meta) or run.report:
        reward = seal.agree(reward, run.report, f"{root}/tests", tests, details)
    if run.timed_out:
        reward, details["reason"] = 0.0, f"tests timed out after {timeout_s:g} s"
    return Verdict(reward=reward, passed=reward >= 1.0, details=details, verifier_version=version)


async def pristine_harness(sandbox: Sandbox, root: str, script: str, workdir: str, env: dict) -> tuple[list, dict]:
    """The pristine bash running PRISTINE_SHELL, which sources the test script; `env` for it."""
    wrapper = f"{root}/seal/pristine.sh"
    await sandbox.write_file(wrapper, PRISTINE_SHELL, mode=0o644, as_root=True)
    env = {**env, "HOME": "/root", "__PTRAIN_LOADER": LOADER, "__PTRAIN_LIBS": LIBRARY_PATH,
           "__PTRAIN_PRISTINE": PRISTINE, "__PTRAIN_SEAL": f"{root}/seal", "__PTRAIN_SCRIPT": script,
           "__PTRAIN_STATE_PATH": ":".join([*STATE_SITE, workdir])}  # fmt: skip
    return [LOADER, "--library-path", LIBRARY_PATH, f"{PRISTINE}/usr/bin/bash", "--noprofile", "--norc", wrapper], env


async def start_services(sandbox: Sandbox, services: list[str], details: dict) -> str:
    """Start the services a task declares, from the restored state, left running for the tests."""
    if not services:
        return "sealed: nothing from the agent's state runs until the test script calls it"
    for command in services:
        started = await sandbox.exec(command, timeout_s=60, keep_running=True)
        if not started.ok:
            details.setdefault("service_errors", []).append(
                f"{command}: exit {started.exit_code}: {started.output[-300:]}"
            )
    return ("weaker: the task's declared services (" + "; ".join(services) + ") started from the agent's state "
            "and ran as root beside the harness")  # fmt: skip


async def reward_files(sandbox: Sandbox, logs: str) -> dict[str, bytes | str]:
    """The reward files the script left: their bytes, or why they can't be read (a link, a FIFO...).

    Every process of the sandbox user is dead by now, so what is checked here is what is read. They
    are read as the sandbox user, who owns logs/verifier (the agent's root has no CAP_DAC_OVERRIDE)."""
    listing = await sandbox.exec(
        f"cd '{logs}' || exit 3; for f in {' '.join(REWARD_FILES)}; do if [ -L $f ]; then echo $f a symlink; "
        "elif [ -f $f ]; then echo $f file; elif [ -e $f ]; then echo $f not a regular file; fi; done",
        timeout_s=30,
    )
    if not listing.ok:
        return {name: f"can't be read: logs/verifier can't be opened ({listing.output.strip()[-200:]})"
                for name in REWARD_FILES}  # fmt: skip
    found: dict[str, bytes | str] = {}
    for line in listing.output.splitlines():
        name, _, kind = line.partition(" ")
        if name not in REWARD_FILES:
            continue
        if kind != "file":
            found[name] = f"is {kind}"
            continue
        try:
            found[name] = await sandbox.read_file(f"{logs}/{name}", max_bytes=MAX_REWARD_BYTES)
        except ToolError as e:
            found[name] = f"can't be read ({e})"
    return found


def harbor_reward(found: Mapping[str, bytes | str], layout: str, exit_code: int, details: dict) -> float:
    """Harbor's reward from the files the test script wrote (pure: tested without a sandbox).

    `reward.json`'s `reward` key, else `reward.txt`; a file that is there but is not a number is a 0
    saying so, and so is no reward at all, except in the Terminal-Bench 1 layout (no reward files:
    the script's exit code decides, and `reward_from` says so)."""
    data = found.get("reward.json")
    if isinstance(data, str):
        return zero(details, f"logs/verifier/reward.json {data}")
    if data is not None:
        try:
            parsed = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            return zero(details, f"logs/verifier/reward.json is not JSON: {data[:200]!r}")
        if isinstance(parsed, dict):
            details["rewards"] = parsed
            if "reward" in parsed:
                return number(parsed["reward"], "reward.json", details)
        details["note"] = "logs/verifier/reward.json has no `reward` key: reward.txt decides"
    data = found.get("reward.txt")
    if isinstance(data, str):
        return zero(details, f"logs/verifier/reward.txt {data}")
    if data is not None:
        return number(data.decode(errors="replace").strip(), "reward.txt", details)
    if layout == "terminal-bench":
        details["reward_from"] = "exit code (terminal-bench 1 layout)"
        return 1.0 if exit_code == 0 else 0.0
    extra = " (reward.json has no `reward` key)" if "note" in details else ""
    return zero(details, f"the test script wrote no reward: no logs/verifier/reward.json or reward.txt{extra}")


def number(value: object, name: str, details: dict) -> float:
    try:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ValueError(f"a {type(value).__name__}")
        reward = float(value)
        if not math.isfinite(reward):
            raise ValueError("not finite")
    except ValueError as e:
        return zero(details, f"logs/verifier/{name} holds no number: {str(value)[:200]!r} ({e})")
    details["reward_from"] = name
    if not 0.0 <= reward <= 1.0:
        details["note"] = f"{name} said {reward:g}: clamped to [0, 1]"
    return min(max(reward, 0.0), 1.0)


def zero(details: dict, reason: str) -> float:
    details["reason"] = reason
    return 0.0
