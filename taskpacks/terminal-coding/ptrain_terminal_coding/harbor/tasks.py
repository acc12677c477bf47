"""Imported tasks as Tasks: instruction, image, the tests and test script the verifier runs (verify.py),
and the gold solution as one bash command.
"""

from __future__ import annotations

import base64
import json
import re
import shlex
from pathlib import Path

from ptrain.errors import ConfigError
from ptrain.sandbox.images import ImageSpec
from ptrain.taskpack import Task, split_of
from ptrain_terminal_coding.harbor.imported import META, SOLUTION_ROOT
from ptrain_terminal_coding.harbor.spec import test_timeout_cap_s
from ptrain_terminal_coding.written import read_tree

VERIFY_OVERHEAD_S = 90.0  # restoring the workspace, the harness, reading the reward files


def verify_budget_s(timeout_s: float) -> float:
    """How long ptrain waits for a verdict: the test script's time (capped) and the verification around it."""
    return min(timeout_s, test_timeout_cap_s()) + VERIFY_OVERHEAD_S


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
            split=meta.get("split") or split_of(task_id),  # imported before splits were chosen: by hash
            setup=exports(meta.get("image_env", {})),
            image=ImageSpec(
                name=f"imported-{meta['name']}",
                context=folder / "environment",
                workdir=meta["workdir"],
                root=bool(meta.get("root")),  # the agent works as root; verified from the whole container state
                **meta.get("resources", {}),  # task.toml's cpus, memory_mb, storage_mb, build_timeout_sec
            ),
            metadata={
                "verifier": "harbor",
                "layout": meta["layout"],
                "tests": read_tree(folder / "tests"),
                "test_script": meta["test_script"],
                "solution": gold_command(
                    folder / "solution", meta["solution_script"], meta["workdir"], meta.get("solution_env", {})
                ),
                "timeout_s": float(meta["timeout_s"]),
                "verify_timeout_s": verify_budget_s(float(meta["timeout_s"])),  # ptrain's wait for the verdict
                "agent_timeout_s": meta.get("agent_timeout_s"),
                "env": dict(meta.get("env", {})),
                "image_env": dict(meta.get("image_env", {})),
                "parser": meta.get("parser"),
                "workdir": meta["workdir"],
                "tags": meta.get("tags", []),
                "pins": meta.get("pins", []),
                "root": bool(meta.get("root")),
                "services": list(meta.get("services", [])),
            },
        )
    except (OSError, ValueError, KeyError) as e:
        raise ConfigError(
            f"imported task {folder} is broken: {type(e).__name__}: {e}",
            fix=f"re-run `ptrain taskpacks import-harbor` on its source, or delete {folder}",
        ) from e


def gold_command(solution: Path, script: str | None, workdir: str, env: dict[str, str] | None = None) -> str | None:
    """One bash command that writes solution/ where Harbor's /solution was moved, then runs the script
    (with task.toml's [solution] env exported)."""
    if not script:
        return None
    lines = [f"rm -rf {SOLUTION_ROOT} && mkdir -p {SOLUTION_ROOT}", *filter(None, [exports(env or {})])]
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
