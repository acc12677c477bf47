import subprocess

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


def test_removing_everything_leaves_zero():
    store = make_store()
    store.remove("B", 4)
    assert store.quantities["B"] == 0
    assert store.value("B") == 0


def test_removing_unknown_item_is_out_of_stock():
    with pytest.raises(OutOfStock):
        make_store().remove("Z", 1)


def test_report_breaks_ties_by_sku():
    store = Store()
    store.add(Item("Y", "yam", 1.0), 3)
    store.add(Item("X", "xigua", 3.0), 1)
    store.add(Item("W", "walnut", 0.25), 4)
    assert report(store).splitlines() == ["X  xigua  1  3.00", "Y  yam  3  3.00", "W  walnut  4  1.00", "TOTAL  7.00"]


def test_command_line_report():
    out = subprocess.run(["python3", "-m", "inventory", "/workspace/stock.csv"], cwd="/workspace", capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines() == [
        "K-1  keyboard  6  153.00",
        "C-3  cable  40  130.00",
        "M-2  mouse  10  120.00",
        "TOTAL  403.00",
    ]
