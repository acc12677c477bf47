"""Hand-written tasks: one directory each, `tasks/<category>/<name>/`.

    task.toml     instruction, difficulty (easy|medium|hard); optional setup (shell run in the
                  workspace before the model starts), timeout_s (for the hidden tests), pythonpath
    files/        the initial workspace (may be absent)
    tests/        hidden pytest tests; they run only at verification, outside the workspace
    solution.sh   the gold solution, run as one `bash` call in the workspace

The task id is `<category>/<name>`; its split comes from a stable hash of the id.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from ptrain.errors import ConfigError
from ptrain.taskpack import DIFFICULTIES, Task, split_of

TASKS_DIR = Path(__file__).parent / "tasks"
KEYS = {"instruction", "difficulty", "setup", "timeout_s", "pythonpath"}


def read_tree(root: Path) -> dict[str, bytes]:
    if not root.is_dir():
        return {}
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


def load_task(folder: Path, category: str) -> Task:
    where = f"task {category}/{folder.name} ({folder})"
    try:
        spec = tomllib.loads((folder / "task.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"{where}: bad task.toml: {e}") from e
    unknown = set(spec) - KEYS
    if unknown or "instruction" not in spec or spec.get("difficulty") not in DIFFICULTIES:
        raise ConfigError(
            f"{where}: task.toml needs instruction and difficulty {DIFFICULTIES}; unknown keys: {sorted(unknown)}"
        )
    tests = read_tree(folder / "tests")
    if not tests or not (folder / "solution.sh").is_file():
        raise ConfigError(f"{where}: needs tests/ and solution.sh")
    task_id = f"{category}/{folder.name}"
    return Task(
        id=task_id,
        instruction=spec["instruction"].strip(),
        category=category,
        difficulty=spec["difficulty"],
        split=split_of(task_id),
        files=read_tree(folder / "files"),
        setup=spec.get("setup", ""),
        metadata={
            "tests": tests,
            "solution": (folder / "solution.sh").read_text(),
            "timeout_s": float(spec.get("timeout_s", 120)),
            "pythonpath": list(spec.get("pythonpath", ["/workspace"])),
        },
    )


def load_written(root: Path = TASKS_DIR) -> list[Task]:
    return [load_task(toml.parent, toml.parent.parent.name) for toml in sorted(root.glob("*/*/task.toml"))]
