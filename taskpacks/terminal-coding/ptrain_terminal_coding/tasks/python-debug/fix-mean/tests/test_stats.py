import pytest

from stats import mean, spread

# Each value is checked for its exact type before it is compared: an object whose __eq__ always
# says True is not a float.


def test_mean():
    result = mean([1, 2, 3, 4])
    assert type(result) is float
    assert result == 2.5


def test_mean_of_one():
    result = mean([7])
    assert type(result) in (int, float)
    assert result == 7


def test_mean_empty():
    with pytest.raises(ValueError):
        mean([])


def test_spread():
    result = spread([3, 9, 1])
    assert type(result) is int
    assert result == 8


def test_mean_of_floats():
    result = mean([0.5, 1.5])
    assert type(result) is float
    assert result == 1.0


@pytest.mark.parametrize(
    "xs, want",
    [([2, 4, 9], 5.0), ((1, 2), 1.5), ([-3, 3], 0.0), (list(range(101)), 50.0), ([10, 0, 0, 0, 0], 2.0), ([0.1, 0.2, 0.3], 0.2)],
)
def test_mean_of_other_sequences(xs, want):
    result = mean(xs)
    assert type(result) in (int, float)
    assert abs(result - want) < 1e-9


def test_mean_lies_between_the_smallest_and_largest_value():
    for xs in ([5, 1, 8], [2.5, 2.5], [-7, -1, -4, -2]):
        result = mean(xs)
        assert type(result) in (int, float)
        assert min(xs) <= result <= max(xs)
        assert abs(result * len(xs) - sum(xs)) < 1e-9


def test_spread_of_other_values():
    assert type(spread([5])) is int and spread([5]) == 0
    result = spread([2.5, -1.0, 1.0])
    assert type(result) is float and result == 3.5
