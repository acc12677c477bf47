"""Imported tasks as Tasks, and their verification: the converted test script run in the sandbox.

Verification restores the workspace first and only then brings the tests in, under a /tmp directory
whose name the workspace can't guess. The reward is what the tests write to logs/verifier/reward.txt
or reward.json, else the test script's exit code.
"""

from __future__ import annotations

import base64
import json
import math
import re
import shlex
import uuid
from pathlib import Path

from ptrain.errors import ConfigError, SandboxError, ToolError, VerifierError
from ptrain.sandbox.container import Sandbox
from ptrain.sandbox.images import ImageSpec
from ptrain.taskpack import Task, Verdict, place_files, split_of
from ptrain_terminal_coding.harbor.imported import META, SOLUTION_ROOT, VERIFY_ROOT
from ptrain_terminal_coding.written import read_tree

PYTEST_FAILED = re.compile(r"^=+ .*\b\d+ (failed|errors?)\b.* =+$", re.MULTILINE)


def exports(env: dict[str, str]) -> str:
    """Shell lines that set the image's ENV in the sandbox shell ($VARS expand, as Docker expands them)."""
    quote = lambda v: '"' + re.sub(r'(["\\`])', r"\\\1", v) + '"'  # noqa: E731
    return "\n".join(f"export {k}={quote(v)}" for k, v in env.items() if re.fullmatch(r"[A-Za-z_]\w*", k))


def load_imported(root: Path) -> list[Task]:
    """Tasks from the converted directories under `root` (none if it does not exist)."""
    if not root.is_dir():
        return []
    return [load_one(meta.parent) for meta in sorted(root.glob(f"*/{META}"))]


def load_one(folder: Path) -> Task:
    try:
        meta = json.loads((folder / META).read_text())
        task_id = f"imported/{meta['name']}"
        return Task(
            id=task_id,
            instruction=(folder / "instruction.md").read_text().strip(),
            category=meta["category"],
            difficulty=meta["difficulty"],
            split=split_of(task_id),
            setup=exports(meta.get("image_env", {})),
            image=ImageSpec(name=f"imported-{meta['name']}", context=folder / "environment", workdir=meta["workdir"]),
            metadata={
                "verifier": "harbor",
                "layout": meta["layout"],
                "tests": read_tree(folder / "tests"),
                "test_script": meta["test_script"],
                "solution": gold_command(folder / "solution", meta["solution_script"], meta["workdir"]),
                "timeout_s": float(meta["timeout_s"]),
                "agent_timeout_s": meta.get("agent_timeout_s"),
                "env": dict(meta.get("env", {})),
                "parser": meta.get("parser"),
                "workdir": meta["workdir"],
                "tags": meta.get("tags", []),
            },
        )
    except (OSError, ValueError, KeyError) as e:
        raise ConfigError(
            f"imported task {folder} is broken: {type(e).__name__}: {e}",
            fix=f"re-run `ptrain taskpacks import-harbor` on its source, or delete {folder}",
        ) from e


def gold_command(solution: Path, script: str | None, workdir: str) -> str | None:
    """One bash command that writes solution/ where Harbor's /solution was moved, then runs the script."""
    if not script:
        return None
    lines = [f"rm -rf {SOLUTION_ROOT} && mkdir -p {SOLUTION_ROOT}"]
    for rel, data in read_tree(solution).items():
        path = shlex.quote(f"{SOLUTION_ROOT}/{rel}")
        if "/" in rel:
            lines.append(f"mkdir -p $(dirname {path})")
        try:
            text = data.decode()
            if "PTRAIN_EOF" in text:
                raise ValueError("the heredoc marker is in the file")
            lines.append(f"cat > {path} <<'PTRAIN_EOF'\n{text.rstrip(chr(10))}\nPTRAIN_EOF")
        except ValueError:  # binary (UnicodeDecodeError is one)
            lines.append(f"echo {base64.b64encode(data).decode()} | base64 -d > {path}")
    lines.append(f"cd {shlex.quote(workdir)} && bash {SOLUTION_ROOT}/{script}")
    return "\n".join(lines)


async def verify_imported(task: Task, artifact: bytes, sandbox: Sandbox, version: str) -> Verdict:
    """Restore the workspace, only then bring the tests in, run the converted script; read the reward."""
    meta = task.metadata
    workdir = meta["workdir"]
    cleared = await sandbox.exec(f"find {shlex.quote(workdir)} -mindepth 1 -delete", timeout_s=60)
    if not cleared.ok:  # the image's files are in the fresh workdir: clear them so deletions count too
        raise SandboxError(f"could not clear {workdir} before restoring task {task.id}: {cleared.output[-500:]}")
    await sandbox.put_tar(workdir, artifact)
    root = f"/tmp/.verify-{uuid.uuid4().hex}"
    tests = {}
    for rel, data in meta["tests"].items():
        try:
            tests[rel] = data.decode().replace(VERIFY_ROOT, root).encode()
        except UnicodeDecodeError:
            tests[rel] = data
    await place_files(sandbox, tests, root=f"{root}/tests")
    env = {"TEST_DIR": f"{root}/tests", "T_BENCH_TEST_DIR": f"{root}/tests", **meta["env"]}
    assignments = " ".join(f"{k}={shlex.quote(v.replace(VERIFY_ROOT, root))}" for k, v in env.items())
    command = (
        f"{task.setup}\nmkdir -p {root}/logs/verifier {root}/logs/agent && cd {shlex.quote(workdir)} && "
        f"env {assignments} bash {root}/tests/{meta['test_script']} 2>&1"
    )
    result = await sandbox.exec(command, timeout_s=meta["timeout_s"], max_output_bytes=8192)
    details: dict = {"exit_code": result.exit_code, "output": result.output[-4000:]}
    reward = await read_reward(sandbox, f"{root}/logs/verifier", task, details)
    if reward is None:
        reward, details["reward_from"] = (1.0 if result.ok else 0.0), "exit code"
        if meta.get("parser") == "pytest" and PYTEST_FAILED.search(result.output[-2000:]):
            reward, details["reward_from"] = 0.0, "exit code and pytest's summary"  # `pytest ... || true` is no pass
    if result.timed_out:
        reward, details["error"] = 0.0, f"tests timed out after {meta['timeout_s']:g} s"
    return Verdict(reward=reward, passed=reward >= 1.0, details=details, verifier_version=version)


async def read_reward(sandbox: Sandbox, logs: str, task: Task, details: dict) -> float | None:
    for name in ("reward.txt", "reward.json"):
        try:
            raw = (await sandbox.read_file(f"{logs}/{name}", max_bytes=65536)).decode(errors="replace").strip()
        except ToolError:
            continue
        try:
            if name == "reward.txt":
                value = float(raw)
            else:
                data = details["rewards"] = json.loads(raw)
                numbers = [v for v in data.values() if isinstance(v, int | float)] if isinstance(data, dict) else []
                value = float(data["reward"] if isinstance(data, dict) and "reward" in data else
                              sum(numbers) / len(numbers) if numbers else data)  # fmt: skip
        except (ValueError, TypeError, KeyError) as e:
            raise VerifierError(f"task {task.id} wrote an unreadable {name}: {raw[:200]!r} ({e})") from e
        if not math.isfinite(value):
            raise VerifierError(f"task {task.id} wrote a reward that is not a number to {name}: {raw[:200]!r}")
        details["reward_from"] = name
        return min(max(value, 0.0), 1.0)
    return None
