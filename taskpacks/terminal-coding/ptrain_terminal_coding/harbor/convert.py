"""Importing: every Harbor or Terminal-Bench task under a folder becomes a self-contained task directory.

Each layout is read into the same result: instruction.md, environment/ with the converted
Containerfile, tests/ and solution/ with converted scripts, and ptrain-import.json. A task is written
to a temporary directory and renamed into place, and one that can't be converted is an error in its
own result while the others are still imported.
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib
import uuid
from pathlib import Path

from ptrain.errors import ConfigError
from ptrain_terminal_coding.harbor.dockerfile import convert_dockerfile
from ptrain_terminal_coding.harbor.imported import META, ImportResult
from ptrain_terminal_coding.harbor.offline import Needs, needs_of
from ptrain_terminal_coding.harbor.shell import convert_script, moved_roots, rewrite_paths
from ptrain_terminal_coding.harbor.spec import CAP_ENV, read_spec, test_timeout_cap_s
from ptrain_terminal_coding.harbor.wheels import PYTHON_VERSION
from ptrain_terminal_coding.written import read_tree

TB_NOT_CONTEXT = {"task.yaml", "run-tests.sh", "solution.sh", "solution.yaml", "tests", "Dockerfile",
                  "docker-compose.yaml", "docker-compose.yml"}  # fmt: skip


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "task"


def difficulty_of(value: object) -> str:
    text = str(value or "").lower()
    if any(word in text for word in ("hard", "expert", "difficult")):
        return "hard"
    return "easy" if any(word in text for word in ("easy", "trivial", "beginner", "simple")) else "medium"


def find_tasks(src: Path) -> list[tuple[Path, str]]:
    """Task directories under `src` (or `src` itself), with their layout; not looking inside a task."""
    if (src / "task.toml").is_file():
        return [(src, "harbor")]
    if (src / "task.yaml").is_file():
        return [(src, "terminal-bench")]
    found = []
    for child in sorted(p for p in src.iterdir() if p.is_dir() and not p.name.startswith(".")):
        found += find_tasks(child)
    return found


def import_tasks(src: Path, dest: Path, split: str = "test", root: bool = True) -> list[ImportResult]:
    """Convert every task under `src` into `dest/<name>/`; a task that can't be converted is an error
    in its result (naming it and what is wrong) and the others are still imported. The tasks go to
    `split` (a benchmark is held out), or "" for train/dev/test by a hash of each id. With `root` (the
    default, as Terminal-Bench runs its agents) the agent works as root on a writable root filesystem
    and verification starts from the episode's whole container state; without, as the sandbox user in
    the workdir, and only the workdir is verified."""
    if not src.is_dir():
        raise ConfigError(f"{src} is not a directory", fix="give a Harbor or Terminal-Bench task directory")
    found = find_tasks(src)
    if not found:
        raise ConfigError(f"no task.toml (Harbor) or task.yaml (Terminal-Bench) under {src}")
    dest.mkdir(parents=True, exist_ok=True)
    results, seen = [], set()
    for folder, layout in found:
        result = ImportResult(slug(folder.name), layout, folder)
        try:
            if result.name in seen:
                raise ConfigError(f"another task under {src} is also named {result.name!r}")
            seen.add(result.name)
            convert(folder, dest / result.name, result, split, root)
        except (ConfigError, OSError, ValueError, KeyError, TypeError) as e:  # TOML and YAML errors are ValueErrors
            result.error = f"task {result.name!r} ({folder}): {e}"
        results.append(result)
    return results


def convert(folder: Path, out: Path, result: ImportResult, split: str = "test", root: bool = True) -> None:
    """Write the converted task to a temporary directory, then put it in place of any older import."""
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex[:8]}")
    try:
        meta = (read_harbor if result.layout == "harbor" else read_terminal_bench)(folder, tmp, result)
        meta.update(name=result.name, layout=result.layout, source=str(folder.resolve()), base=result.base)
        meta.update(workdir=result.workdir, image_env=result.env, notes=result.notes, warnings=result.warnings)
        meta.update(requirements=result.requirements, pins=result.pins, split=split, root=root)
        (tmp / META).write_text(json.dumps(meta, indent=2) + "\n")
        shutil.rmtree(out, ignore_errors=True)
        tmp.rename(out)
        result.dest = out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def copy_context(src: Path, out: Path, skip: set[str]) -> None:
    shutil.copytree(src, out, symlinks=True, ignore=lambda d, names: [n for n in names if Path(d) == src and n in skip])


def script_needs(scripts: list[Path], result: ImportResult) -> Needs:
    """What the test and solution scripts install at run time (provided in the image instead)."""
    needs = Needs()
    for script in scripts:
        if script.is_file():
            needs.add(needs_of(script.read_text(errors="replace"), build=False))
    for version in needs.python:
        if version.split("@")[0] != PYTHON_VERSION:
            result.warnings.append(f"the tests ask for Python {version}: they run under the image's python3 "
                                   f"({PYTHON_VERSION}, Debian's)")  # fmt: skip
    return needs


def read_harbor(folder: Path, out: Path, result: ImportResult) -> dict:
    spec = tomllib.loads((folder / "task.toml").read_text())
    info = read_spec(spec, result)
    for name in ("instruction.md", "tests/test.sh"):
        if not (folder / name).is_file():
            raise ConfigError(f"no {name} (a Harbor task needs instruction.md and tests/test.sh)")
    env_dir = folder / "environment"
    dockerfile = env_dir / "Dockerfile"
    image = spec.get("environment", {}).get("docker_image")
    if not dockerfile.is_file() and not image:
        raise ConfigError("no environment/Dockerfile and no [environment] docker_image")
    if (folder / "steps").is_dir():
        result.warnings.append(
            "steps/ (a multi-step task) ignored: the top-level instruction and tests are the task here"
        )
    if (env_dir / "docker-compose.yaml").is_file():
        result.warnings.append("environment/docker-compose.yaml ignored: one container per task here")
    if env_dir.is_dir():
        copy_context(env_dir, out / "environment", {"Dockerfile", "docker-compose.yaml"})
    else:
        (out / "environment").mkdir(parents=True)
    text = dockerfile.read_text() if dockerfile.is_file() else f"FROM {image}\n"
    if dockerfile.is_file() and image:
        result.notes.append(f"[environment] docker_image {image!r} not used: environment/Dockerfile is built")
    tests = script_needs([folder / "tests" / "test.sh", folder / "solution" / "solve.sh"], result)
    containerfile = convert_dockerfile(text, out / "environment", result, tests)
    (out / "environment" / "Containerfile").write_text(containerfile)
    result.env.update(info.pop("environment_env"))
    (out / "instruction.md").write_text(strip_canary((folder / "instruction.md").read_text()))
    copy_tests(folder / "tests", out / "tests", "test.sh", result)
    if (folder / "solution" / "solve.sh").is_file():
        copy_tests(folder / "solution", out / "solution", "solve.sh", result)
    meta = spec.get("metadata", {})
    return {
        "category": meta.get("category") or "imported",
        "difficulty": difficulty_of(meta.get("difficulty")),
        "tags": list(meta.get("tags", [])),
        "test_script": "test.sh",
        "solution_script": "solve.sh" if (out / "solution").is_dir() else None,
        # ptrain's own: commands that start services the tests query, run from the agent's state before them
        "services": [str(c) for c in spec.get("ptrain", {}).get("services", [])],
        **info,
    }


def read_terminal_bench(folder: Path, out: Path, result: ImportResult) -> dict:
    import yaml  # a dependency of transformers; only Terminal-Bench tasks need it

    try:
        spec = yaml.safe_load((folder / "task.yaml").read_text()) or {}
    except yaml.YAMLError as e:
        raise ConfigError(f"bad task.yaml: {e}") from e
    instruction = spec.get("instruction") or next(
        (d.get("description") for d in spec.get("descriptions", []) if d.get("key") == "base"), None
    )
    if not instruction:
        raise ConfigError("task.yaml has no instruction")
    if not (folder / "Dockerfile").is_file():
        raise ConfigError("no Dockerfile (docker-compose-only tasks are not supported)")
    if (folder / "docker-compose.yaml").is_file():
        result.notes.append("docker-compose.yaml ignored: one container per task here")
    copy_context(folder, out / "environment", TB_NOT_CONTEXT)
    tests = script_needs([folder / "run-tests.sh", folder / "solution.sh"], result)
    containerfile = convert_dockerfile((folder / "Dockerfile").read_text(), out / "environment", result, tests)
    (out / "environment" / "Containerfile").write_text(containerfile)
    (out / "instruction.md").write_text(instruction.strip() + "\n")
    script = folder / "run-tests.sh"
    if script.is_file():
        copy_tests(folder / "tests", out / "tests", None, result)
        run_tests = convert_script(script.read_text(), "run-tests.sh", result)
        (out / "tests" / "run-tests.sh").write_text(run_tests)
    elif (folder / "tests" / "test_outputs.py").is_file():
        copy_tests(folder / "tests", out / "tests", None, result)
        (out / "tests" / "run-tests.sh").write_text("#!/bin/bash\npytest $TEST_DIR/test_outputs.py -rA\n")
        result.notes.append("no run-tests.sh: runs pytest on tests/test_outputs.py, as Terminal-Bench does")
    else:
        raise ConfigError("no run-tests.sh and no tests/test_outputs.py")
    if (folder / "solution.sh").is_file():
        (out / "solution").mkdir()
        solution = convert_script((folder / "solution.sh").read_text(), "solution.sh", result)
        (out / "solution" / "solve.sh").write_text(solution)
    elif (folder / "solution.yaml").is_file():
        result.warnings.append("solution.yaml (keystrokes for tmux) is not imported: the task has no gold")
    return {
        "category": spec.get("category") or "imported",
        "difficulty": difficulty_of(spec.get("difficulty")),
        "tags": list(spec.get("tags") or []),
        "test_script": "run-tests.sh",
        "solution_script": "solve.sh" if (out / "solution").is_dir() else None,
        "timeout_s": timeout(spec.get("max_test_timeout_sec"), result),
        "agent_timeout_s": float(spec.get("max_agent_timeout_sec") or 0) or None,
        "env": {},
        "parser": spec.get("parser_name", "pytest"),  # Terminal-Bench scores by parsing pytest's summary
    }


def copy_tests(src: Path, out: Path, script: str | None, result: ImportResult) -> None:
    """Copy a tests/ or solution/ folder: `script` converted, /tests and /logs in the other text files moved."""
    out.mkdir(parents=True)
    for rel, data in read_tree(src).items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if rel == script:
            target.write_text(convert_script(data.decode(), f"{src.name}/{rel}", result))
            continue
        try:
            text = data.decode()
        except UnicodeDecodeError:
            target.write_bytes(data)
            continue
        moved = rewrite_paths(text)
        if moved != text:
            result.notes.append(f"{src.name}/{rel}: moved {moved_roots(text)} under /tmp")
        target.write_text(moved)


def timeout(value: object, result: ImportResult) -> float:
    """Terminal-Bench's max_test_timeout_sec; like a task.toml's, capped when the tests run (verify.py)."""
    wanted = float(value or 120.0)
    if wanted > test_timeout_cap_s():
        result.warnings.append(f"verifier timeout {wanted:g} s is capped to {test_timeout_cap_s():g} s when "
                               f"the tests run ({CAP_ENV})")  # fmt: skip
    return wanted


def strip_canary(text: str) -> str:
    lines = text.splitlines()
    while lines and ("canary" in lines[0].lower() or not lines[0].strip()):
        lines.pop(0)
    return "\n".join(lines).strip() + "\n"
