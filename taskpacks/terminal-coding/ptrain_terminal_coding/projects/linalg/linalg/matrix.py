"""Matrices as lists of rows. Elimination uses Fractions, so results are exact."""

from fractions import Fraction


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
