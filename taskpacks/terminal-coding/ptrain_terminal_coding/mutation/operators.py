"""Mutation operators: pure functions of a parsed file that propose edits planting one typical bug.

Each operator maps (tree, source) to `Edit`s: a swapped operator, an off-by-one, the wrong variable,
a dropped condition. `OPERATORS` names them in the order enumeration applies them; an operator may
propose an edit that does not parse or changes nothing, which enumeration then drops.
"""

from __future__ import annotations

import ast
import hashlib
import itertools
import re
from collections.abc import Callable, Iterator

from ptrain_terminal_coding.mutation.edits import Edit, Source


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
