"""The import rules of docs/architecture.md hold: each part of ptrain imports only what its row allows.

The table in the doc is the source: a part's row names its files and the parts it may import, and
which third-party libraries only it may import. Every import counts, a function's lazy import too.
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"


def rules(doc: Path = DOC) -> dict[str, dict]:
    """The doc's table: {part: {"paths": [...], "may": the parts it may import, "owns": libraries only it may}}."""
    table: dict[str, dict] = {}
    for line in doc.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or not cells[0].startswith("**"):
            continue
        part, where, _what, may, owns = cells
        names = lambda text: {n for n in re.split(r"[,\s]+", text.replace("`", "")) if n and n != "-"}  # noqa: E731
        table[part.strip("*")] = {"paths": re.findall(r"`([^`]+)`", where), "may": names(may), "owns": names(owns)}
    if not table:
        raise AssertionError(f"{doc} has no table of parts (rows starting with **part**)")
    return table


def part_of(module: str, table: dict[str, dict]) -> str | None:
    """The part a ptrain module (dotted) belongs to: the row whose path is it or holds it, the longest."""
    path = module.replace(".", "/")
    best, length = None, -1
    for part, row in table.items():
        for where in row["paths"]:
            folder = where.endswith("/")  # a folder holds every module under it; a file is one module
            where = where.removesuffix("/").removesuffix(".py").removesuffix("/__init__")
            if (path == where or folder and path.startswith(where + "/")) and len(where) > length:
                best, length = part, len(where)
    return best


def modules(root: Path) -> dict[str, Path]:
    """Every module of the ptrain package under `root`, by dotted name."""
    found = {}
    for path in sorted((root / "ptrain").rglob("*.py")):
        name = ".".join(path.relative_to(root).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def imported(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, dotted name) of every import in a file, relative ones resolved against its package."""
    package = ".".join(path.relative_to(root).parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            found += [(node.lineno, f"{base}.{a.name}" if base == "ptrain" else base) for a in node.names]
    return sorted(set(found))


def violations(root: Path = ROOT, doc: Path = DOC) -> list[str]:
    """What breaks the rules, one line each: a file in no part, a forbidden import, a library out of its part."""
    table = rules(doc)
    owners: dict[str, set[str]] = {}
    for part, row in table.items():
        for lib in row["owns"]:
            owners.setdefault(lib, set()).add(part)
    problems = []
    for name, path in modules(root).items():
        part = part_of(name, table)
        where = path.relative_to(root)
        if part is None:
            problems.append(f"{where}: in no part of {doc.name}; add it to a row's files")
            continue
        may = table[part]["may"] | {"ptrain", "errors"}
        for line, target in imported(path, root):
            top = target.split(".")[0]
            if top == "ptrain":
                other = part_of(target, table)
                if other is None and target != "ptrain":
                    problems.append(f"{where}:{line}: imports {target}, in no part of {doc.name}")
                elif other not in (None, part) and other not in may:
                    problems.append(f"{where}:{line}: {part} imports {target} ({other}), which it must not")
            elif top in owners and part not in owners[top]:
                problems.append(
                    f"{where}:{line}: {part} imports {top}, which only {' and '.join(sorted(owners[top]))} may"
                )
    return problems


def test_every_part_imports_only_what_docs_architecture_allows():
    assert violations() == []


def test_the_table_names_every_part_it_allows():
    table = rules()
    unknown = {p for row in table.values() for p in row["may"]} - set(table)
    assert unknown == set()


@pytest.mark.parametrize(
    ("file", "line", "broken"),
    [
        ("ptrain/train/grpo.py", "from ptrain.sandbox import PoolSet", "train imports ptrain.sandbox"),
        ("ptrain/engine/sampling.py", "import podman", "engine imports podman, which only sandbox may"),
        ("ptrain/store.py", "    from ptrain.cli import app", "store imports ptrain.cli"),
        ("ptrain/rollout/chat.py", "from ..online import train_online", "rollout imports ptrain.online"),
    ],
)
def test_a_forbidden_import_is_caught(tmp_path, file, line, broken):
    shutil.copytree(ROOT / "ptrain", tmp_path / "ptrain", ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / file
    body = f"def _late():\n{line}\n" if line.startswith(" ") else f"{line}\n"
    target.write_text(target.read_text() + "\n\n" + body)
    found = violations(tmp_path)
    assert any(broken in problem for problem in found), found


def test_a_file_in_no_part_is_caught(tmp_path):
    shutil.copytree(ROOT / "ptrain", tmp_path / "ptrain", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "ptrain" / "misc.py").write_text('"""Nobody knows what this is."""\n')
    assert any("ptrain/misc.py: in no part" in problem for problem in violations(tmp_path))
