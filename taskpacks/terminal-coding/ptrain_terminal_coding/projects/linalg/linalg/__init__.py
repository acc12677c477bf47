"""Small exact linear algebra on lists of numbers: vectors, matrices, determinants and inverses."""

from linalg.matrix import determinant, identity, inverse, matmul, solve, trace, transpose
from linalg.vector import add, cross, dot, norm_squared, scale, subtract

__all__ = [
    "add",
    "cross",
    "determinant",
    "dot",
    "identity",
    "inverse",
    "matmul",
    "norm_squared",
    "scale",
    "solve",
    "subtract",
    "trace",
    "transpose",
]
