import pytest

from pages import page_count, paginate

# Each value is checked for its exact type before it is compared: an object whose __eq__ always
# says True is not a list of ints.


def a_page(result, kind=int):
    assert type(result) is list
    assert all(type(x) is kind for x in result)
    return result


def a_count(result):
    assert type(result) is int
    return result


def test_first_page():
    assert a_page(paginate(list(range(25)), 1)) == list(range(10))


def test_last_partial_page():
    assert a_page(paginate(list(range(25)), 3)) == [20, 21, 22, 23, 24]


def test_page_count_rounds_up():
    assert a_count(page_count(25, 10)) == 3


def test_page_out_of_range():
    with pytest.raises(ValueError):
        paginate(list(range(25)), 4)


def test_exact_multiple_has_no_extra_page():
    assert a_count(page_count(30, 10)) == 3
    assert a_page(paginate(list(range(30)), 3)) == list(range(20, 30))


def test_empty_list_has_one_empty_page():
    assert a_count(page_count(0, 5)) == 1
    assert a_page(paginate([], 1, 5)) == []


def test_page_zero_is_rejected():
    with pytest.raises(ValueError):
        paginate([1, 2, 3], 0)


def test_bad_per_page_is_rejected():
    with pytest.raises(ValueError):
        page_count(10, 0)


def test_pages_cover_every_item_once():
    items = list(range(47))
    pages = [a_page(paginate(items, p, 6)) for p in range(1, a_count(page_count(47, 6)) + 1)]
    assert [x for page in pages for x in page] == items


@pytest.mark.parametrize("total, per_page, pages", [(1, 10, 1), (10, 10, 1), (11, 10, 2), (7, 3, 3), (5, 1, 5), (99, 100, 1)])
def test_page_count_of_other_sizes(total, per_page, pages):
    assert a_count(page_count(total, per_page)) == pages


def test_pages_of_other_items():
    letters = list("abcdefg")
    assert a_page(paginate(letters, 1, 3), str) == ["a", "b", "c"]
    assert a_page(paginate(letters, 2, 3), str) == ["d", "e", "f"]
    assert a_page(paginate(letters, 3, 3), str) == ["g"]
    with pytest.raises(ValueError):
        paginate(letters, 4, 3)


def test_every_page_has_its_own_items_in_order():
    items = list(range(100, 123))
    for page in range(1, 6):
        assert a_page(paginate(items, page, 5)) == items[(page - 1) * 5 : page * 5]
    with pytest.raises(ValueError):
        paginate(items, 6, 5)
