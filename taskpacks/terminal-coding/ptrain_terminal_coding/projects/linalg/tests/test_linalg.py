from fractions import Fraction

import pytest

from linalg import (
    add,
    cross,
    determinant,
    dot,
    identity,
    inverse,
    matmul,
    norm_squared,
    scale,
    solve,
    subtract,
    trace,
    transpose,
)


def test_add_and_subtract_work_elementwise():
    assert add([1, 2, 3], [10, 20, 30]) == [11, 22, 33]
    assert subtract([10, 20, 30], [1, 2, 3]) == [9, 18, 27]


def test_vectors_of_different_lengths_cannot_be_combined():
    with pytest.raises(ValueError):
        add([1, 2], [1, 2, 3])
    with pytest.raises(ValueError):
        subtract([1], [])
    with pytest.raises(ValueError):
        dot([1, 2, 3], [1])


def test_scale_multiplies_every_component():
    assert scale(3, [1, -2, 0]) == [3, -6, 0]


def test_dot_product():
    assert dot([1, 2, 3], [4, 5, 6]) == 32
    assert dot([], []) == 0
    assert dot([2, -1], [1, 2]) == 0


def test_norm_squared_is_the_dot_product_with_itself():
    assert norm_squared([3, 4]) == 25
    assert norm_squared([1, 2, 2]) == 9


def test_cross_product_of_unit_vectors():
    assert cross([1, 0, 0], [0, 1, 0]) == [0, 0, 1]
    assert cross([0, 1, 0], [0, 0, 1]) == [1, 0, 0]
    assert cross([0, 0, 1], [1, 0, 0]) == [0, 1, 0]


def test_cross_product_of_general_vectors():
    assert cross([1, 2, 3], [4, 5, 6]) == [-3, 6, -3]
    assert cross([2, 3, 5], [7, 11, 13]) == [-16, 9, 1]


def test_cross_product_needs_3_vectors():
    with pytest.raises(ValueError):
        cross([1, 2], [3, 4])
    with pytest.raises(ValueError):
        cross([1, 2, 3], [3, 4])


def test_identity_has_ones_on_the_diagonal():
    assert identity(3) == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    assert identity(0) == []


def test_transpose_swaps_rows_and_columns():
    assert transpose([[1, 2, 3], [4, 5, 6]]) == [[1, 4], [2, 5], [3, 6]]
    assert transpose([[7]]) == [[7]]


def test_trace_sums_the_diagonal():
    assert trace([[1, 2], [3, 4]]) == 5
    assert trace([[1, 2, 3], [4, 5, 6], [7, 8, 9]]) == 15
    with pytest.raises(ValueError):
        trace([[1, 2, 3], [4, 5, 6]])


def test_matmul_of_square_matrices():
    assert matmul([[1, 2], [3, 4]], [[5, 6], [7, 8]]) == [[19, 22], [43, 50]]
    assert matmul([[5, 6], [7, 8]], [[1, 2], [3, 4]]) == [[23, 34], [31, 46]]


def test_matmul_of_rectangular_matrices():
    assert matmul([[1, 2, 3]], [[1], [2], [3]]) == [[14]]
    assert matmul([[1], [2]], [[3, 4, 5]]) == [[3, 4, 5], [6, 8, 10]]


def test_matmul_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="cannot multiply 1x2 by 3x1"):
        matmul([[1, 2]], [[1], [2], [3]])


def test_matmul_by_the_identity_changes_nothing():
    m = [[2, 3, 1], [4, 0, 5], [1, 1, 1]]
    assert matmul(m, identity(3)) == m
    assert matmul(identity(3), m) == m


def test_determinant_of_small_matrices():
    assert determinant([[5]]) == 5
    assert determinant([[1, 2], [3, 4]]) == -2
    assert determinant([[2, 0, 1], [1, 3, 2], [1, 1, 2]]) == 6


def test_determinant_with_a_zero_in_the_first_pivot_swaps_rows():
    assert determinant([[0, 1], [1, 0]]) == -1
    assert determinant([[0, 2, 1], [3, 1, 1], [1, 0, 2]]) == -11


def test_determinant_of_a_singular_matrix_is_zero():
    assert determinant([[1, 2], [2, 4]]) == 0
    assert determinant([[1, 2, 3], [4, 5, 6], [7, 8, 9]]) == 0


def test_determinant_is_exact():
    assert determinant([[1, 2], [3, 5]]) == -1
    assert determinant([[3, 1, 4], [1, 5, 9], [2, 6, 5]]) == -90
    assert determinant(identity(4)) == 1


def test_determinant_needs_a_square_matrix():
    with pytest.raises(ValueError):
        determinant([[1, 2, 3], [4, 5, 6]])


def test_solve_finds_the_unique_solution():
    assert solve([[2, 1], [1, 3]], [3, 5]) == [Fraction(4, 5), Fraction(7, 5)]
    assert solve([[1, 1, 1], [0, 2, 5], [2, 5, -1]], [6, -4, 27]) == [5, 3, -2]


def test_solve_handles_a_zero_first_pivot():
    assert solve([[0, 1], [1, 0]], [2, 3]) == [3, 2]


def test_solve_rejects_a_singular_matrix():
    with pytest.raises(ValueError, match="singular"):
        solve([[1, 2], [2, 4]], [1, 2])


def test_inverse_times_the_matrix_is_the_identity():
    m = [[4, 7], [2, 6]]
    assert inverse(m) == [[Fraction(3, 5), Fraction(-7, 10)], [Fraction(-1, 5), Fraction(2, 5)]]
    assert matmul(m, inverse(m)) == identity(2)
    n = [[2, 0, 1], [1, 3, 2], [1, 1, 2]]
    assert matmul(inverse(n), n) == identity(3)
