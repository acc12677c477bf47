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
from ptrain.sandbox.container import Sandbox
from ptrain.taskpack import Task, Verdict
from ptrain_terminal_coding.harbor import seal
from ptrain_terminal_coding.harbor.imported import VERIFY_ROOT
from ptrain_terminal_coding.harbor.spec import test_timeout_cap_s
from ptrain_terminal_coding.verifier import GIT_SAFE, PATH, PLUGIN

HARNESS_ROOT = "/tmp/.ptrain-harness"  # root's, 0711: traversable, not listable, by the sandbox user
REWARD_FILES = ("reward.json", "reward.txt")  # Harbor's order
MAX_REWARD_BYTES = 65536
BASE_ENV = {"PATH": PATH, "HOME": "/home/agent", "LANG": "C.UTF-8", "TERM": "dumb", "PYTHONUNBUFFERED": "1"}


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
    """Restore the workspace, only then bring the harness in, run the test script sealed; read the reward."""
    meta, workdir = task.metadata, task.metadata["workdir"]
    cleared = await sandbox.exec(f"find {shlex.quote(workdir)} -mindepth 1 -delete", timeout_s=60)
    if not cleared.ok:  # the image's files are in the fresh workdir: clear them so deletions count too
        raise SandboxError(f"could not clear {workdir} before restoring task {task.id}: {cleared.output[-500:]}")
    try:
        await sandbox.put_tar(workdir, artifact)
    except ToolError as e:  # the model's workspace, which it made unrestorable: its failure
        return Verdict(0.0, False, {"reason": f"the workspace could not be restored: {e}"}, version)
    key = uuid.uuid4().hex
    root, canary = f"{HARNESS_ROOT}/{key}", f"test_ptrain_canary_{key[:12]}"
    tests = {}
    for rel, data in meta["tests"].items():
        try:
            tests[rel] = data.decode().replace(VERIFY_ROOT, root).encode()
        except UnicodeDecodeError:
            tests[rel] = data
    uid, _, gid = sandbox.limits.user.partition(":")
    await sandbox.put_tar(HARNESS_ROOT, harness_tar(root, tests, canary, (int(uid), int(gid or uid))), as_root=True)
    script = f"{root}/tests/{meta['test_script']}"
    cap = test_timeout_cap_s()
    timeout_s = min(float(meta["timeout_s"]), cap)
    run = await sandbox.run(["bash", script], test_env(meta, root), cwd=workdir, timeout_s=timeout_s)
    details: dict = {"exit_code": run.exit_code, "output": run.output[-4000:]}
    details.update(timeout_s=timeout_s, timeout_cap_s=cap, task_timeout_s=float(meta["timeout_s"]))
    found = await reward_files(sandbox, f"{root}/logs/verifier")
    reward = harbor_reward(found, meta["layout"], run.exit_code, details)
    if seal.runs_pytest(meta) or run.report:
        reward = seal.agree(reward, run.report, f"{root}/tests", tests, details)
    if run.timed_out:
        reward, details["reason"] = 0.0, f"tests timed out after {timeout_s:g} s"
    return Verdict(reward=reward, passed=reward >= 1.0, details=details, verifier_version=version)


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
