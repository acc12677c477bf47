"""Hidden tests of linalg: fresh inputs beyond the visible tests, every result checked type by type.

The package is compared with a reference copy of its original code on seeded random inputs. Values
are compared as plain builtins (`canon`), so an object that only claims equality fails, and so does
code that special-cases the visible tests' inputs.
"""

import copy
import dataclasses
import random
from fractions import Fraction

import linalg as pkg

PLAIN = (int, str, bool, type(None), Fraction)
STATEFUL = ()  # objects compared by their attributes


def canon(value):
    kind = type(value)
    if kind is float:
        return ("float", float(f"{value:.12g}"))
    if kind in PLAIN:
        return (kind.__name__, value)
    if kind in (list, tuple):
        return (kind.__name__, [canon(v) for v in value])
    if kind is dict:
        return ("dict", sorted(((canon(k), canon(v)) for k, v in value.items()), key=repr))
    if kind.__name__ in STATEFUL:
        return (kind.__name__, canon(vars(value)))
    if dataclasses.is_dataclass(kind):
        return (kind.__name__, [canon(getattr(value, f.name)) for f in dataclasses.fields(value)])
    raise AssertionError(f"a value of unexpected type {kind.__qualname__}")


def outcome(fn, *args, **kwargs):
    args, kwargs = copy.deepcopy(args), copy.deepcopy(kwargs)
    try:
        result = ("ok", canon(fn(*args, **kwargs)))
    except AssertionError:
        raise
    except Exception as e:
        result = ("raises", type(e).__name__, str(e))
    return result, canon(args), canon(kwargs)


# The reference: the package's original code.


def shape(m):
    return len(m), len(m[0]) if m else 0


def identity(n):
    return [[1 if i == j else 0 for j in range(n)] for i in range(n)]


def transpose(m):
    rows, cols = shape(m)
    return [[m[i][j] for i in range(rows)] for j in range(cols)]


def trace(m):
    rows, cols = shape(m)
    if rows != cols:
        raise ValueError("trace needs a square matrix")
    return sum(m[i][i] for i in range(rows))


def matmul(a, b):
    rows, inner = shape(a)
    inner_b, cols = shape(b)
    if inner != inner_b:
        raise ValueError(f"cannot multiply {rows}x{inner} by {inner_b}x{cols}")
    result = [[0] * cols for _ in range(rows)]
    for i in range(rows):
        for j in range(cols):
            for k in range(inner):
                result[i][j] += a[i][k] * b[k][j]
    return result


def eliminate(m):
    """Row-reduce a copy of `m` to upper triangular form; returns (rows, number of row swaps)."""
    rows = [[Fraction(x) for x in row] for row in m]
    n = len(rows)
    swaps = 0
    for col in range(n):
        pivot = next((r for r in range(col, n) if rows[r][col] != 0), None)
        if pivot is None:
            continue
        if pivot != col:
            rows[col], rows[pivot] = rows[pivot], rows[col]
            swaps += 1
        for r in range(col + 1, n):
            factor = rows[r][col] / rows[col][col]
            rows[r] = [x - factor * y for x, y in zip(rows[r], rows[col])]
    return rows, swaps


def determinant(m):
    rows, cols = shape(m)
    if rows != cols:
        raise ValueError("determinant needs a square matrix")
    reduced, swaps = eliminate(m)
    result = Fraction(-1 if swaps % 2 else 1)
    for i in range(rows):
        result *= reduced[i][i]
    return result


def solve(a, b):
    """Solve a x = b for x by Gauss-Jordan elimination on the augmented matrix."""
    n = len(a)
    augmented = [list(row) + [value] for row, value in zip(a, b)]
    reduced, _ = eliminate(augmented)
    if any(reduced[i][i] == 0 for i in range(n)):
        raise ValueError("the matrix is singular")
    x = [Fraction(0)] * n
    for i in reversed(range(n)):
        known = sum(reduced[i][j] * x[j] for j in range(i + 1, n))
        x[i] = (reduced[i][n] - known) / reduced[i][i]
    return x


def inverse(m):
    n = len(m)
    columns = [solve(m, column) for column in identity(n)]
    return transpose(columns)


def check_same_length(u, v):
    if len(u) != len(v):
        raise ValueError(f"vectors differ in length: {len(u)} and {len(v)}")


def add(u, v):
    check_same_length(u, v)
    return [a + b for a, b in zip(u, v)]


def subtract(u, v):
    check_same_length(u, v)
    return [a - b for a, b in zip(u, v)]


def scale(k, v):
    return [k * a for a in v]


def dot(u, v):
    check_same_length(u, v)
    total = 0
    for a, b in zip(u, v):
        total += a * b
    return total


def norm_squared(v):
    return dot(v, v)


def cross(u, v):
    if len(u) != 3 or len(v) != 3:
        raise ValueError("the cross product needs two 3-vectors")
    return [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ]


# Inputs and checks.


def vector(rng, n):
    return [rng.randint(-6, 6) for _ in range(n)]


def matrix(rng, rows, cols):
    return [[rng.choice([0, 0, 1, -1, 2, 3, -4, 5, 7]) for _ in range(cols)] for _ in range(rows)]


def test_random_vectors_combine_like_the_reference():
    rng = random.Random(2231)
    for _ in range(400):
        n = rng.randint(0, 4)
        u, v = vector(rng, n), vector(rng, rng.choice([n, n, n, n + 1, max(0, n - 1)]))
        k = rng.choice([-2, 0, 1, 3, Fraction(1, 2)])
        for mine, theirs, args in [
            (pkg.add, add, (u, v)),
            (pkg.subtract, subtract, (u, v)),
            (pkg.dot, dot, (u, v)),
            (pkg.scale, scale, (k, u)),
            (pkg.norm_squared, norm_squared, (u,)),
            (pkg.cross, cross, (u, v)),
        ]:
            assert outcome(mine, *args) == outcome(theirs, *args), (mine.__name__, args)


def test_random_matrices_multiply_and_transpose_like_the_reference():
    rng = random.Random(2232)
    for _ in range(300):
        rows, inner, cols = rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 4)
        a, b = matrix(rng, rows, inner), matrix(rng, rng.choice([inner, inner, inner + 1]), cols)
        assert outcome(pkg.matmul, a, b) == outcome(matmul, a, b), (a, b)
        assert outcome(pkg.transpose, a) == outcome(transpose, a), a
        assert outcome(pkg.trace, a) == outcome(trace, a), a
        assert outcome(pkg.determinant, a) == outcome(determinant, a), a
        assert outcome(pkg.identity, rows) == outcome(identity, rows)


def test_random_square_matrices_reduce_like_the_reference():
    rng = random.Random(2233)
    for _ in range(300):
        n = rng.randint(1, 4)
        m, b = matrix(rng, n, n), vector(rng, n)
        assert outcome(pkg.determinant, m) == outcome(determinant, m), m
        assert outcome(pkg.solve, m, b) == outcome(solve, m, b), (m, b)
        assert outcome(pkg.inverse, m) == outcome(inverse, m), m
        assert outcome(pkg.matrix.eliminate, m) == outcome(eliminate, m), m


def test_results_are_exact_numbers():
    assert canon(pkg.dot([1, 2], [3, 4])) == canon(11)
    assert canon(pkg.determinant([[2, 1], [1, 1]])) == canon(Fraction(1))
    assert canon(pkg.solve([[2, 0], [0, 4]], [1, 1])) == canon([Fraction(1, 2), Fraction(1, 4)])
    assert canon(pkg.inverse([[2, 0], [0, 4]])) == canon([[Fraction(1, 2), Fraction(0)], [Fraction(0), Fraction(1, 4)]])
    assert canon(pkg.transpose([[1, 2]])) == canon([[1], [2]])
    assert canon(pkg.identity(2)) == canon([[1, 0], [0, 1]])
    assert canon(pkg.trace([[2, 9], [9, 3]])) == canon(5)
    assert canon(pkg.cross([1, 1, 0], [0, 1, 1])) == canon([1, -1, 1])
