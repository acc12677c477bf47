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


def test_exact_multiple_has_no_extra_page():
    assert page_count(30, 10) == 3
    assert paginate(list(range(30)), 3) == list(range(20, 30))


def test_empty_list_has_one_empty_page():
    assert page_count(0, 5) == 1
    assert paginate([], 1, 5) == []


def test_page_zero_is_rejected():
    with pytest.raises(ValueError):
        paginate([1, 2, 3], 0)


def test_bad_per_page_is_rejected():
    with pytest.raises(ValueError):
        page_count(10, 0)


def test_pages_cover_every_item_once():
    items = list(range(47))
    pages = [paginate(items, p, 6) for p in range(1, page_count(47, 6) + 1)]
    assert [x for page in pages for x in page] == items
