"""Bug-injection tasks: one small AST mutation of a Python project shipped in `projects/`.

Each `projects/<name>/` is a stdlib-only package with a pytest file. Mutation operators are pure
functions of a parsed file that propose edits planting one typical bug: a swapped operator, an
off-by-one, the wrong variable, a dropped condition. An edit replaces one source segment (found
from the nodes' positions), so the rest of the file keeps its formatting and a diff shows one
small change. Enumeration is deterministic: projects, files and operators in sorted order, nodes
in tree order, and a mutant that repeats an earlier program is dropped.

`python -m ptrain_terminal_coding.mutation --build` runs each project's tests against every mutant
and keeps those that make at least one test fail, dropping those that survive, hang or break test
collection; it writes `mutants.json`. `mutation_tasks()` reads that manifest, runs nothing, and turns
every kept mutant into a "make the failing tests pass" Task whose gold solution restores the file.
"""

from __future__ import annotations

import argparse
import ast
import functools
import hashlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ptrain.errors import ConfigError
from ptrain.taskpack import Task, split_of
from ptrain_terminal_coding.verifier import parse_junit

PROJECTS_DIR = Path(__file__).parent / "projects"
MANIFEST = Path(__file__).parent / "mutants.json"
REBUILD = "python -m ptrain_terminal_coding.mutation --build"


@dataclass(frozen=True)
class Edit:
    start: int  # offsets into the file's text (projects are ASCII, so bytes and characters agree)
    end: int
    new: str


@dataclass(frozen=True)
class Mutant:
    id: str
    project: str
    file: str  # relative to the project root
    operator: str
    edit: Edit


def apply_edit(text: str, edit: Edit) -> str:
    return text[: edit.start] + edit.new + text[edit.end :]


class Source:
    """A file's text with offsets for AST positions (which count UTF-8 bytes, hence ASCII only)."""

    def __init__(self, text: str):
        if not text.isascii():
            raise ValueError("mutation needs ASCII sources: AST columns count bytes")
        self.text = text
        self.line_starts = [0]
        for line in text.splitlines(keepends=True):
            self.line_starts.append(self.line_starts[-1] + len(line))

    def start(self, node: ast.AST) -> int:
        return self.line_starts[node.lineno - 1] + node.col_offset

    def end(self, node: ast.AST) -> int:
        return self.line_starts[node.end_lineno - 1] + node.end_col_offset

    def segment(self, node: ast.AST) -> str:
        return self.text[self.start(node) : self.end(node)]

    def token(self, lo: int, hi: int, pattern: str) -> tuple[int, int] | None:
        """Where an operator matching `pattern` sits between two operands, if nothing else does."""
        match = re.fullmatch(rf"[\s()\\]*({pattern})[\s()\\]*", self.text[lo:hi])
        return (lo + match.start(1), lo + match.end(1)) if match else None


def code_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """Every node below `node` in tree order, skipping f-strings (3.11 misplaces nodes inside them)."""
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, ast.JoinedStr):
            yield child
            yield from code_nodes(child)


LOOSE = (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)  # bind more loosely than `and`/`or`/`not`
ARITH_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)


def wrapped(node: ast.AST, src: Source) -> str:
    """The node's text, parenthesized if it would not survive as an operand of `and`/`or`."""
    return f"({src.segment(node)})" if isinstance(node, LOOSE) else src.segment(node)


def binds_looser_than_plus(node: ast.AST) -> bool:
    """Whether `node + 1` would split `node` (comparisons, `not`, bit operators, ...)."""
    if isinstance(node, ast.BinOp):
        return not isinstance(node.op, ARITH_OPS)
    return isinstance(node, (*LOOSE, ast.Compare)) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not))


# --- operators: (tree, source) -> edits -------------------------------------------------------

COMPARE = {  # operator class -> (its token as a regex, its boundary move or negation, its flip)
    ast.Lt: ("<", "<=", ">"),
    ast.LtE: ("<=", "<", ">="),
    ast.Gt: (">", ">=", "<"),
    ast.GtE: (">=", ">", "<="),
    ast.Eq: ("==", "!=", None),
    ast.NotEq: ("!=", "==", None),
    ast.Is: ("is", "is not", None),
    ast.IsNot: (r"is\s+not", "is", None),
    ast.In: ("in", "not in", None),
    ast.NotIn: (r"not\s+in", "in", None),
}
ARITH = {  # operator class -> (its token, the replacement)
    ast.Add: ("+", "-"),
    ast.Sub: ("-", "+"),
    ast.Mult: ("*", "/"),
    ast.Div: ("/", "*"),
    ast.FloorDiv: ("//", "/"),
    ast.Mod: ("%", "//"),
    ast.Pow: ("**", "*"),
    ast.LShift: ("<<", ">>"),
    ast.RShift: (">>", "<<"),
    ast.BitOr: ("|", "&"),
    ast.BitAnd: ("&", "|"),
    ast.BitXor: ("^", "|"),
}


def compare_edits(tree: ast.Module, src: Source, which: int) -> Iterator[Edit]:
    for node in code_nodes(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                token, *replacements = COMPARE[type(op)]
                span = src.token(src.end(operands[i]), src.start(operands[i + 1]), token)
                if span and replacements[which]:
                    yield Edit(*span, replacements[which])


def comparison(tree: ast.Module, src: Source) -> Iterator[Edit]:
    """Move a comparison's boundary or negate it: `<` <-> `<=`, `==` <-> `!=`, `in` <-> `not in`."""
    return compare_edits(tree, src, 0)


def comparison_flip(tree: ast.Module, src: Source) -> Iterator[Edit]:
    """Turn an ordering around: `<` <-> `>`, `<=` <-> `>=`."""
    return compare_edits(tree, src, 1)


def arithmetic(tree: ast.Module, src: Source) -> Iterator[Edit]:
    """Swap a binary operator: `+` <-> `-`, `*` <-> `/`, `//` -> `/`, `%` -> `//`, ..."""
    for node in code_nodes(tree):
        if isinstance(node, ast.BinOp) and type(node.op) in ARITH:
            token, new = ARITH[type(node.op)]
            span = src.token(src.end(node.left), src.start(node.right), re.escape(token))
            if span:
                yield Edit(*span, new)
        elif isinstance(node, ast.AugAssign) and type(node.op) in ARITH:
            token, new = ARITH[type(node.op)]
            span = src.token(src.end(node.target), src.start(node.value), re.escape(token + "="))
            if span:
                yield Edit(*span, new + "=")


def boolean(tree: ast.Module, src: Source) -> Iterator[Edit]:
    """Swap `and` <-> `or`."""
    for node in code_nodes(tree):
        if isinstance(node, ast.BoolOp):
            token, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
            for left, right in itertools.pairwise(node.values):
                span = src.token(src.end(left), src.start(right), token)
                if span:
                    yield Edit(*span, new)


def drop_operand(tree: ast.Module, src: Source) -> Iterator[Edit]:
    """Drop one condition of an `and`/`or`."""
    for node in code_nodes(tree):
        if isinstance(node, ast.BoolOp):
            joiner = " and " if isinstance(node.op, ast.And) else " or "
            for i in range(len(node.values)):
                rest = [wrapped(value, src) for j, value in enumerate(node.values) if j != i]
                yield Edit(src.start(node), src.end(node), joiner.join(rest))


def negate_condition(tree: ast.Module, src: Source) -> Iterator[Edit]:
    """Negate the test of an `if`, a conditional expression or a comprehension filter."""
    tests = []
    for node in code_nodes(tree):
        if isinstance(node, ast.If | ast.IfExp):
            tests.append(node.test)
        elif isinstance(node, ast.comprehension):
            tests.extend(node.ifs)
    for test in tests:
        if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
            text = f"({src.segment(test)})" if isinstance(test, (*LOOSE, ast.Compare)) else src.segment(test)
            yield Edit(src.start(test), src.end(test), f"not {text}")


JUMPS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def drop_guard(tree: ast.Module, src: Source) -> Iterator[Edit]:
    """Delete a guard clause: an `if` without `else` whose body only returns, raises, breaks or continues."""
    for node in code_nodes(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list) or len(block) < 2:
                continue
            for stmt in block:
                if (
                    isinstance(stmt, ast.If)
                    and not stmt.orelse
                    and len(stmt.body) == 1
                    and isinstance(stmt.body[0], JUMPS)
                ):
                    lo, hi = src.line_starts[stmt.lineno - 1], src.line_starts[stmt.end_lineno]
                    if not src.text[lo : src.start(stmt)].strip() and not src.text[src.end(stmt) : hi].strip():
                        yield Edit(lo, hi, "")


def drop_unary(tree: ast.Module, src: Source) -> Iterator[Edit]:
    """Drop a `not` or a unary minus."""
    for node in code_nodes(tree):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub):
            token = r"not\s*" if isinstance(node.op, ast.Not) else r"-\s*"
            match = re.match(token, src.text[src.start(node) : src.start(node.operand)])
            if match:
                yield Edit(src.start(node), src.start(node) + match.end(), "")


def swap_bool(tree: ast.Module, src: Source) -> Iterator[Edit]:
    """`True` <-> `False`."""
    for node in code_nodes(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            yield Edit(src.start(node), src.end(node), str(not node.value))


def min_max(tree: ast.Module, src: Source) -> Iterator[Edit]:
    """`min` <-> `max`."""
    for node in code_nodes(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max"):
            yield Edit(src.start(node.func), src.end(node.func), "max" if node.func.id == "min" else "min")


def constant(tree: ast.Module, src: Source) -> Iterator[Edit]:
    """Off by one on an integer literal: n -> n + 1 and n -> n - 1."""
    for node in code_nodes(tree):
        if isinstance(node, ast.Constant) and type(node.value) is int and src.segment(node) == str(node.value):
            for new in (node.value + 1, node.value - 1):
                yield Edit(src.start(node), src.end(node), str(new))


def is_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    if isinstance(node, ast.BinOp):
        node = node.right  # `x - 1` is left to `constant`
    return isinstance(node, ast.Constant)


def bound(tree: ast.Module, src: Source) -> Iterator[Edit]:
    """Off by one on a computed slice or range bound: `xs[i:]` -> `xs[i + 1:]`, `range(n)` -> `range(n - 1)`."""
    for node in code_nodes(tree):
        if isinstance(node, ast.Slice):
            bounds = [node.lower, node.upper]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
            bounds = node.args[:2]
        else:
            continue
        for expr in bounds:
            if expr is not None and not is_literal(expr):
                for delta in (" + 1", " - 1"):
                    text = f"({src.segment(expr)})" if binds_looser_than_plus(expr) else src.segment(expr)
                    yield Edit(src.start(expr), src.end(expr), text + delta)


def scope_nodes(func: ast.AST, into_comprehensions: bool) -> Iterator[ast.AST]:
    """The nodes of a function's own scope: not nested functions, classes or lambdas."""
    for child in ast.iter_child_nodes(func):
        nested = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef)
        comprehension = isinstance(child, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp)
        if nested or isinstance(child, ast.JoinedStr | ast.arguments) or (comprehension and not into_comprehensions):
            continue
        yield child
        yield from scope_nodes(child, into_comprehensions)


def bound_names(func: ast.FunctionDef | ast.AsyncFunctionDef, src: Source) -> dict[str, int]:
    """A function's own variables and the offset from which each holds a value (parameters: -1)."""
    args = func.args
    names = {a.arg: -1 for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if a}
    after_statement = {}  # `x = ...` binds x only once the statement is done
    for node in scope_nodes(func, into_comprehensions=False):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                after_statement.update({id(name): src.end(node) for name in ast.walk(target)})
    for node in scope_nodes(func, into_comprehensions=False):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            at = after_statement.get(id(node), src.start(node))
            names[node.id] = min(names.get(node.id, at), at)
    return {name: at for name, at in names.items() if name not in ("self", "cls", "_")}


def wrong_variable(tree: ast.Module, src: Source) -> Iterator[Edit]:
    """Use another variable of the same function, one that already holds a value at that point."""
    for func in code_nodes(tree):
        if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            names = bound_names(func, src)
            for node in scope_nodes(func, into_comprehensions=True):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
                    here = src.start(node)
                    others = [name for name, at in names.items() if name != node.id and at < here]
                    if others:
                        pick = int(hashlib.sha256(f"{node.id}@{here}".encode()).hexdigest(), 16) % len(others)
                        yield Edit(here, src.end(node), others[pick])


OPERATORS: dict[str, Callable[[ast.Module, Source], Iterator[Edit]]] = {
    "comparison": comparison,
    "comparison_flip": comparison_flip,
    "arithmetic": arithmetic,
    "boolean": boolean,
    "drop_operand": drop_operand,
    "negate_condition": negate_condition,
    "drop_guard": drop_guard,
    "drop_unary": drop_unary,
    "swap_bool": swap_bool,
    "min_max": min_max,
    "constant": constant,
    "bound": bound,
    "wrong_variable": wrong_variable,
}


# --- enumeration --------------------------------------------------------------------------------


def read_project(root: Path) -> dict[str, bytes]:
    """A project's files by relative path, without caches."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not any(part.startswith((".", "__pycache__")) for part in p.relative_to(root).parts)
    }


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


# --- build: keep the mutants that some test catches ----------------------------------------------

# A test server: this interpreter with pytest imported once, reading one request per line and
# forking a child per run, so a run costs a fork instead of an interpreter start. The child runs
# pytest under a CPU-time limit (a looping mutant is stopped the same way however loaded the machine
# is), a wall-clock alarm as backstop, and a 2 GiB address-space limit (a mutant that allocates
# without end fails fast). It answers with the run's exit status, negative for a signal.
SERVER = """
import json, os, resource, signal, sys
import pytest
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            os.chdir(request["root"])
            sys.path.insert(0, request["root"])
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            resource.setrlimit(resource.RLIMIT_AS, (1 << 31, 1 << 31))
            resource.setrlimit(resource.RLIMIT_CPU, (request["cpu_s"], request["cpu_s"]))
            signal.alarm(request["wall_s"])
            code = int(pytest.main(request["args"]))
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    print(os.waitstatus_to_exitcode(status), flush=True)
"""


# Whether a test fails does not depend on these plug-ins or on assertion rewriting; leaving them out
# halves the cost of a run.
UNUSED_PLUGINS = (
    "cacheprovider doctest faulthandler legacypath logging pastebin setuponly setupplan stepwise subtests "
    "threadexception unittest unraisableexception warnings"
)
LEAN = [*(f"-pno:{name}" for name in UNUSED_PLUGINS.split()), "--assert=plain", "--capture=no"]


@dataclass(frozen=True)
class Outcome:
    status: str  # "passed", "failed" (some test failed), "timeout" or "error" (collection broke, ...)
    failing: tuple[str, ...] = ()
    tests: int = 0


class TestServer:
    """One long-lived test server process; `run` tests a project folder (its `tests/`) in a fresh fork."""

    __test__ = False  # not a pytest test class

    def __init__(self) -> None:
        env = {
            **os.environ,
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True
        )

    def run(self, root: Path, timeout_s: float) -> Outcome:
        report = root.parent / f"{root.name}-report.xml"
        report.unlink(missing_ok=True)
        args = [*LEAN, "-q", "-o", "addopts=", f"--junitxml={report}", "tests"]
        request = {
            "root": str(root),
            "args": args,
            "cpu_s": max(1, round(timeout_s)),
            "wall_s": max(10, round(10 * timeout_s)),
        }
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError(f"the test server died (exit status {self.proc.wait()})")
        code = int(answer)
        if code < 0:
            return Outcome("timeout" if -code in (signal.SIGXCPU, signal.SIGALRM, signal.SIGKILL) else "error")
        if code not in (0, 1) or not report.exists():
            return Outcome("error")
        result = parse_junit(report.read_bytes())
        failing = tuple(sorted(name.rsplit("::", 1)[-1] for name in result["failed"]))
        return Outcome("passed" if code == 0 else "failed", failing, result["tests"])

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def build(projects_dir: Path = PROJECTS_DIR, manifest: Path = MANIFEST, jobs: int = 2, timeout_s: float = 3.0) -> dict:
    """Test every mutant, write the manifest of those some test catches, and return it.

    `timeout_s` limits one run of a project's tests in CPU seconds (a clean run takes about 0.1)."""
    started = time.monotonic()
    projects = {p.name: read_project(p) for p in project_dirs(projects_dir)}
    mutants = enumerate_mutants(projects_dir)
    print(f"{len(mutants)} mutants of {len(projects)} projects; testing with {jobs} jobs", file=sys.stderr)
    local, lock, servers, done = threading.local(), threading.Lock(), [], Counter()

    with tempfile.TemporaryDirectory(prefix="ptrain-mutants-") as tmp:

        def worker() -> tuple[TestServer, dict[str, Path]]:
            if not hasattr(local, "server"):
                local.server, local.copies = TestServer(), {}
                with lock:
                    servers.append(local.server)
            return local.server, local.copies

        def workspace(project: str) -> Path:
            copies = worker()[1]
            if project not in copies:
                copies[project] = Path(tmp) / str(threading.get_ident()) / project
                shutil.copytree(
                    projects_dir / project, copies[project], ignore=shutil.ignore_patterns(".*", "__pycache__")
                )
            return copies[project]

        def baseline(project: str) -> Outcome:
            outcome = worker()[0].run(workspace(project), timeout_s)
            if outcome.status != "passed":
                raise ConfigError(
                    f"project {project}: its own tests do not pass ({outcome})", fix="fix the project first"
                )
            return outcome

        def check(mutant: Mutant) -> Outcome:
            root = workspace(mutant.project)
            original = projects[mutant.project][mutant.file].decode()
            (root / mutant.file).write_text(apply_edit(original, mutant.edit))
            try:
                outcome = worker()[0].run(root, timeout_s)
            finally:
                (root / mutant.file).write_text(original)
            with lock:
                done[outcome.status] += 1
                if done.total() % 100 == 0:
                    counts = ", ".join(f"{k} {v}" for k, v in sorted(done.items()))
                    print(
                        f"  {done.total()}/{len(mutants)} in {time.monotonic() - started:.0f} s: {counts}",
                        file=sys.stderr,
                    )
            return outcome

        try:
            with ThreadPoolExecutor(jobs) as pool:
                tests = {
                    project: outcome.tests
                    for project, outcome in zip(projects, pool.map(baseline, projects), strict=True)
                }
                outcomes = list(pool.map(check, mutants))
        finally:
            for server in servers:
                server.close()

    kept = [
        {
            "id": m.id,
            "project": m.project,
            "file": m.file,
            "operator": m.operator,
            "start": m.edit.start,
            "end": m.edit.end,
            "new": m.edit.new,
            "failing": list(o.failing),
        }
        for m, o in zip(mutants, outcomes, strict=True)
        if o.status == "failed" and o.failing
    ]
    data = {
        "format": 1,
        "projects": {name: {"sha256": digest(files), "tests": tests[name]} for name, files in projects.items()},
        "enumerated": dict(Counter(m.operator for m in mutants)),
        "dropped": dict(Counter(o.status for o in outcomes if o.status != "failed")),
        "mutants": kept,
    }
    write_manifest(data, manifest)
    print(
        f"kept {len(kept)} of {len(mutants)} mutants in {time.monotonic() - started:.0f} s -> {manifest}",
        file=sys.stderr,
    )
    return data


def write_manifest(data: dict, path: Path) -> None:
    """JSON with one mutant per line: small, diffable, and byte-identical for the same content."""
    head = {key: value for key, value in data.items() if key != "mutants"}
    lines = [json.dumps(m, sort_keys=True) for m in data["mutants"]]
    head_text = json.dumps(head, indent=1, sort_keys=True).removesuffix("\n}")
    text = head_text + ',\n "mutants": [\n' + ",\n".join(lines) + "\n ]\n}\n"
    path.write_text(text)


# --- tasks: one per kept mutant, read from the manifest --------------------------------------------

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
    """Where a mutant lives, to the function: the key of its split, so a held-out split holds out
    whole functions and never shares a line with training tasks."""
    line = text.count("\n", 0, offset) + 1
    inside = [name for first, last, name in function_spans(text) if first <= line <= last]
    return f"mutants/{project}/{file}:{inside[-1] if inside else '<module>'}"


def task_of(entry: dict, files: dict[str, bytes], tests: int) -> Task:
    project, file = entry["project"], entry["file"]
    original = files[file].decode()
    mutated = apply_edit(original, Edit(entry["start"], entry["end"], entry["new"]))
    workspace = {f"{project}/{path}": data for path, data in files.items()}
    workspace[f"{project}/{file}"] = mutated.encode()
    package = file.split("/", 1)[0]
    pick = int(hashlib.sha256(entry["id"].encode()).hexdigest(), 16) % len(INSTRUCTIONS)
    return Task(
        id=entry["id"],
        instruction=INSTRUCTIONS[pick].format(project=project, package=package),
        category="python-bugfix",
        difficulty=difficulty_of(len(entry["failing"]), tests),
        split=split_of(location_of(project, file, original, entry["start"])),
        files=workspace,
        setup=SETUP,
        metadata={
            "tests": {path.removeprefix("tests/"): data for path, data in files.items() if path.startswith("tests/")},
            "solution": restore_script(project, file, original),
            "timeout_s": 60.0,
            "pythonpath": [f"/workspace/{project}"],
            "mutant": {"file": file, "operator": entry["operator"], "failing": entry["failing"]},
        },
    )


def load_manifest(manifest: Path = MANIFEST, projects_dir: Path = PROJECTS_DIR) -> tuple[dict, dict[str, dict]]:
    """The manifest and each project's files, checked against the digests it was built from."""
    try:
        data = json.loads(manifest.read_text())
    except (OSError, ValueError) as e:
        raise ConfigError(f"cannot read the mutant manifest {manifest}: {e}", fix=f"run `{REBUILD}`") from e
    projects = {name: read_project(projects_dir / name) for name in data["projects"]}
    stale = [name for name, files in projects.items() if digest(files) != data["projects"][name]["sha256"]]
    if stale:
        raise ConfigError(
            f"the mutant manifest is stale: projects {stale} changed since it was built", fix=f"run `{REBUILD}`"
        )
    return data, projects


def tasks_from_manifest(manifest: Path = MANIFEST, projects_dir: Path = PROJECTS_DIR) -> list[Task]:
    data, projects = load_manifest(manifest, projects_dir)
    return [task_of(m, projects[m["project"]], data["projects"][m["project"]]["tests"]) for m in data["mutants"]]


@functools.cache
def mutation_tasks() -> list[Task]:
    """Every kept mutant of the shipped projects as a Task (read from the manifest; runs nothing)."""
    return tasks_from_manifest()


def summary(data: dict, tasks: list[Task]) -> str:
    def count(values) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(Counter(values).items()))

    kept = Counter(m["operator"] for m in data["mutants"])
    lines = [
        f"{len(tasks)} tasks kept of {sum(data['enumerated'].values())} mutants (dropped: "
        + ", ".join(f"{status} {n}" for status, n in sorted(data["dropped"].items()))
        + ")",
        f"projects: {count(t.id.split('/')[1] for t in tasks)}",
        "operators (kept/enumerated): "
        + ", ".join(f"{op} {kept[op]}/{n}" for op, n in sorted(data["enumerated"].items())),
        f"difficulty: {count(t.difficulty for t in tasks)}",
        f"split: {count(t.split for t in tasks)}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m ptrain_terminal_coding.mutation", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--build", action="store_true", help="test every mutant and rewrite mutants.json")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="test runs in parallel")
    parser.add_argument("--timeout-s", type=float, default=3.0, help="CPU seconds for one run of a project's tests")
    args = parser.parse_args(argv)
    if args.build:
        build(jobs=args.jobs, timeout_s=args.timeout_s)
    data, _ = load_manifest()
    print(summary(data, tasks_from_manifest()))


if __name__ == "__main__":
    main()
