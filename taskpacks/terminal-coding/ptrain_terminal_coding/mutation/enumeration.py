"""The shipped projects and every mutant of them, enumerated deterministically with stable ids.

Projects, files and operators in sorted order, nodes in tree order; a mutant that repeats an earlier
program (or parses to the same tree) is dropped. Ids are keyed by the enclosing function and the
changed line, so they survive edits elsewhere in a file and the manifest can be checked against them.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from pathlib import Path

from ptrain_terminal_coding.mutation.edits import Edit, Source, apply_edit
from ptrain_terminal_coding.mutation.operators import OPERATORS

PROJECTS_DIR = Path(__file__).parents[1] / "projects"
# A project's hidden tests: never in the workspace (nor in the manifest's digest, since which mutants
# are kept depends on the visible tests alone); the verifier runs them beside the visible ones.
HIDDEN = "hidden"


@dataclass(frozen=True)
class Mutant:
    id: str
    project: str
    file: str  # relative to the project root
    operator: str
    edit: Edit


def read_project(root: Path) -> dict[str, bytes]:
    """A project's files by relative path, without caches or its hidden tests: the workspace."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and p.relative_to(root).parts[0] != HIDDEN
        and not any(part.startswith((".", "__pycache__")) for part in p.relative_to(root).parts)
    }


def read_hidden(root: Path) -> dict[str, bytes]:
    """A project's hidden tests (`hidden/test_*.py`) by file name."""
    return {p.name: p.read_bytes() for p in sorted((root / HIDDEN).glob("test_*.py"))}


def project_dirs(projects_dir: Path) -> list[Path]:
    """The projects: folders holding a package of their own name and a tests/ folder."""
    return sorted(p for p in projects_dir.iterdir() if (p / p.name).is_dir() and (p / "tests").is_dir())


def digest(files: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for path, data in sorted(files.items()):
        h.update(f"{path}\0{len(data)}\0".encode() + data)
    return h.hexdigest()


def qualname_at(tree: ast.Module, src: Source, offset: int) -> str:
    names, node = [], tree
    while True:
        inner = [
            child
            for child in ast.iter_child_nodes(node)
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and src.start(child) <= offset < src.end(child)
        ]
        if not inner:
            return ".".join(names)
        node = inner[0]
        names.append(node.name)


def same_tree(a: object, b: object) -> bool:
    """Structural equality of two ASTs (positions ignored), stopping at the first difference."""
    if type(a) is not type(b):
        return False
    if isinstance(a, ast.AST):
        return all(same_tree(getattr(a, f, None), getattr(b, f, None)) for f in a._fields)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(same_tree, a, b))
    return a == b


def mutants_of_source(text: str) -> list[tuple[str, Edit]]:
    """Every (operator, edit) that turns `text` into a different program that parses, once each."""
    src, tree = Source(text), ast.parse(text)
    seen, found = {text}, []
    for name, operator in OPERATORS.items():
        for edit in operator(tree, src):
            mutated = apply_edit(text, edit)
            if mutated in seen:
                continue
            seen.add(mutated)
            try:
                new_tree = ast.parse(mutated)
            except SyntaxError:
                continue
            if not same_tree(tree, new_tree):
                found.append((name, edit))
    return found


def mutant_id(project: str, file: str, operator: str, text: str, edit: Edit, qualname: str, taken: set) -> str:
    """Stable under edits elsewhere in the file: keyed by the enclosing function and the changed lines."""
    lo = text.rfind("\n", 0, edit.start) + 1
    hi = text.find("\n", edit.end)
    hi = len(text) if hi < 0 else hi
    before = text[lo:hi]
    after = before[: edit.start - lo] + edit.new + before[edit.end - lo :]
    key = "\0".join([project, file, operator, qualname, before, after])
    n = 0
    while (task_id := f"mutants/{project}/{operator}-{hashlib.sha256(f'{key}{n}'.encode()).hexdigest()[:8]}") in taken:
        n += 1
    taken.add(task_id)
    return task_id


def enumerate_mutants(projects_dir: Path = PROJECTS_DIR) -> list[Mutant]:
    mutants: list[Mutant] = []
    taken: set[str] = set()
    for root in project_dirs(projects_dir):
        for path in sorted((root / root.name).rglob("*.py")):
            file, text = path.relative_to(root).as_posix(), path.read_text()
            src, tree = Source(text), ast.parse(text)
            for operator, edit in mutants_of_source(text):
                task_id = mutant_id(root.name, file, operator, text, edit, qualname_at(tree, src, edit.start), taken)
                mutants.append(Mutant(task_id, root.name, file, operator, edit))
    return mutants
