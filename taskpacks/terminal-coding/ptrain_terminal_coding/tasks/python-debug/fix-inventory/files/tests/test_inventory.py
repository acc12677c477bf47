import pytest

from inventory.models import Item
from inventory.report import report
from inventory.store import OutOfStock, Store


def make_store():
    store = Store()
    store.add(Item("A", "apple", 0.5), 10)
    store.add(Item("B", "bread", 2.25), 4)
    return store


def test_value_is_quantity_times_price():
    assert make_store().value("A") == 5.0


def test_adding_twice_accumulates():
    store = make_store()
    store.add(Item("A", "apple", 0.5), 5)
    assert store.quantities["A"] == 15


def test_cannot_remove_more_than_in_stock():
    store = make_store()
    with pytest.raises(OutOfStock):
        store.remove("B", 5)


def test_report():
    assert report(make_store()).splitlines() == [
        "B  bread  4  9.00",
        "A  apple  10  5.00",
        "TOTAL  14.00",
    ]
