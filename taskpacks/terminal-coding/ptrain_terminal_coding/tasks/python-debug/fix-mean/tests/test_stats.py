import pytest

from stats import mean, spread


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5


def test_mean_of_one():
    assert mean([7]) == 7


def test_mean_empty():
    with pytest.raises(ValueError):
        mean([])


def test_spread():
    assert spread([3, 9, 1]) == 8


def test_mean_of_floats():
    assert mean([0.5, 1.5]) == 1.0
