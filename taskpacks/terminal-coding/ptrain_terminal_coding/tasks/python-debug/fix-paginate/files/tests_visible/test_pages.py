import pytest

from pages import page_count, paginate


def test_first_page():
    assert paginate(list(range(25)), 1) == list(range(10))


def test_last_partial_page():
    assert paginate(list(range(25)), 3) == [20, 21, 22, 23, 24]


def test_page_count_rounds_up():
    assert page_count(25, 10) == 3


def test_page_out_of_range():
    with pytest.raises(ValueError):
        paginate(list(range(25)), 4)
