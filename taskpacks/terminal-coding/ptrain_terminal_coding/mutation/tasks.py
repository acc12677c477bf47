"""Tasks from the manifest: each kept mutant becomes a "make the failing tests pass" Task. Runs nothing.

The workspace is the project with one file mutated (its visible tests included), and the gold solution
writes the original file back (`solution`); the gold demonstration runs the tests, then replaces the
mutated line(s) with the original ones (`fix`, where those lines are unique), then submits. The verifier runs the visible tests and the project's hidden ones
(`projects/<name>/hidden/`): fresh inputs compared type by type with a reference copy of the original
code, so an always-equal object fails and so does special-casing the visible tests' inputs. Difficulty
follows how many visible tests fail. The split is by project (SPLIT_OF below): a held-out task's code
never appears, mutated or not, in a training workspace.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from pathlib import Path

from ptrain.errors import ConfigError
from ptrain.taskpack import Task
from ptrain_terminal_coding.mutation.edits import Edit, apply_edit
from ptrain_terminal_coding.mutation.enumeration import PROJECTS_DIR, read_hidden
from ptrain_terminal_coding.mutation.manifest import MANIFEST, load_manifest

INSTRUCTIONS = (
    "Some tests in /workspace/{project}/tests fail. Find and fix the bug in the `{package}` package so that "
    "all tests pass. Do not change the tests.",
    "The test suite of the `{package}` package in /workspace/{project} is failing (run `python3 -m pytest` "
    "there). Track down the bug in the package and fix it without modifying the tests.",
    "A recent change broke /workspace/{project}: `cd /workspace/{project} && python3 -m pytest` reports "
    "failures. Fix the code in {project}/{package}/ so every test passes again; leave the tests as they are.",
    "Make the failing tests in /workspace/{project}/tests pass by fixing the bug in the source of `{package}`. "
    "The tests are correct, so do not edit them.",
    "There is a bug in the Python package at /workspace/{project}/{package}. Its tests in "
    "/workspace/{project}/tests show it. Fix the package (not the tests) so that all of them pass.",
)
# Whole projects are held out (a hash of eight names could leave a split empty). Chosen by size: test
# 289 tasks (19%), dev 141 (9%), train the other 1,107; every other project is train.
SPLIT_OF = {"graphs": "test", "ledger": "test", "spans": "dev"}
HEREDOC = "PTRAIN_ORIGINAL_SOURCE"
# A repository of the starting state, so `git diff` shows the model its own changes.
SETUP = (
    "printf '__pycache__/\\n.pytest_cache/\\n' > .gitignore && git init -q && git add -A && "
    "git -c user.name=ptrain -c user.email=ptrain@localhost commit -qm 'starting state'"
)


def difficulty_of(failing: int, tests: int) -> str:
    """Loud bugs are easy, quiet ones hard: easy when at least a third of the tests fail, hard when
    one or two do (the bug shows only in edge cases), medium in between."""
    if 3 * failing >= tests:
        return "easy"
    return "hard" if failing <= 2 else "medium"


def restore_script(project: str, file: str, original: str) -> str:
    """The gold solution: write the file's original text back (a quoted heredoc, so nothing expands)."""
    if HEREDOC in original or not original.endswith("\n"):
        raise ValueError(f"{project}/{file} cannot be written back by a heredoc")
    return f"cd /workspace/{project} && cat > {file} <<'{HEREDOC}'\n{original}{HEREDOC}\n"


def fix_script(project: str, file: str, original: str, mutated: str, edit: Edit) -> str | None:
    """A shorter gold: replace the mutated line(s) with the original ones, as a developer would (and a
    small model can imitate), where those lines occur once in the mutated file; None otherwise."""
    first = mutated.rfind("\n", 0, edit.start) + 1
    last_m = mutated.find("\n", edit.start + len(edit.new))
    last_o = original.find("\n", edit.end)
    if last_m < 0 or last_o < 0:
        return None
    bad, good = mutated[first:last_m], original[first:last_o]
    if mutated.count(bad) != 1 or mutated.replace(bad, good, 1) != original:
        return None
    return (f"cd /workspace/{project} && python3 - <<'PTRAIN_FIX'\nimport pathlib\n"
            f"path = pathlib.Path({file!r})\n"
            f"path.write_text(path.read_text().replace({bad!r}, {good!r}, 1))\nPTRAIN_FIX\n")  # fmt: skip


@functools.cache
def function_spans(text: str) -> tuple[tuple[int, int, str], ...]:
    """(first line, last line, qualified name) of every function in a source file, outermost first."""
    spans = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    spans.append((child.lineno, child.end_lineno or child.lineno, name))
                walk(child, f"{name}.")

    walk(ast.parse(text), "")
    return tuple(spans)


def location_of(project: str, file: str, text: str, offset: int) -> str:
    """Where a mutant lives, to the function (`<module>` outside any): what the probes attack."""
    line = text.count("\n", 0, offset) + 1
    inside = [name for first, last, name in function_spans(text) if first <= line <= last]
    return f"mutants/{project}/{file}:{inside[-1] if inside else '<module>'}"


def original_of(task: Task) -> str:
    """The original text of the mutated file, as the gold solution writes it back."""
    return task.metadata["solution"].split(f"<<'{HEREDOC}'\n", 1)[1].removesuffix(f"{HEREDOC}\n")


def task_of(entry: dict, files: dict[str, bytes], hidden: dict[str, bytes], tests: int) -> Task:
    project, file = entry["project"], entry["file"]
    original = files[file].decode()
    edit = Edit(entry["start"], entry["end"], entry["new"])
    mutated = apply_edit(original, edit)
    workspace = {f"{project}/{path}": data for path, data in files.items()}
    workspace[f"{project}/{file}"] = mutated.encode()
    package = file.split("/", 1)[0]
    visible = {path.removeprefix("tests/"): data for path, data in files.items() if path.startswith("tests/")}
    if not hidden or set(hidden) & set(visible):
        raise ConfigError(
            f"project {project} needs hidden tests named apart from its visible ones",
            fix=f"add projects/{project}/hidden/test_{project}_hidden.py",
        )
    pick = int(hashlib.sha256(entry["id"].encode()).hexdigest(), 16) % len(INSTRUCTIONS)
    return Task(
        id=entry["id"],
        instruction=INSTRUCTIONS[pick].format(project=project, package=package),
        category="python-bugfix",
        difficulty=difficulty_of(len(entry["failing"]), tests),
        split=SPLIT_OF.get(project, "train"),
        files=workspace,
        setup=SETUP,
        metadata={
            "tests": {**visible, **hidden},
            "solution": restore_script(project, file, original),
            "fix": fix_script(project, file, original, mutated, edit),
            "timeout_s": 60.0,
            "pythonpath": [f"/workspace/{project}"],
            "mutant": {
                "file": file,
                "function": location_of(project, file, original, entry["start"]).rsplit(":", 1)[1],
                "operator": entry["operator"],
                "failing": entry["failing"],
            },
        },
    )


def tasks_from_manifest(manifest: Path = MANIFEST, projects_dir: Path = PROJECTS_DIR) -> list[Task]:
    data, projects = load_manifest(manifest, projects_dir)
    hidden = {name: read_hidden(projects_dir / name) for name in projects}
    return [
        task_of(m, projects[m["project"]], hidden[m["project"]], data["projects"][m["project"]]["tests"])
        for m in data["mutants"]
    ]


@functools.cache
def mutation_tasks() -> list[Task]:
    """Every kept mutant of the shipped projects as a Task (read from the manifest; runs nothing)."""
    return tasks_from_manifest()
