"""Vectors as lists of numbers."""


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
