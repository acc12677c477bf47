import subprocess

import pytest

from inventory.models import Item
from inventory.report import report
from inventory.store import OutOfStock, Store

# Values are checked for their exact type before they are compared: an object whose __eq__ always
# says True is neither 5.0 nor a report.


def make_store():
    store = Store()
    store.add(Item("A", "apple", 0.5), 10)
    store.add(Item("B", "bread", 2.25), 4)
    return store


def a_float(value):
    assert type(value) is float
    return value


def a_quantity(store, sku):
    value = store.quantities[sku]
    assert type(value) is int
    return value


def report_lines(store):
    text = report(store)
    assert type(text) is str
    return text.splitlines()


def run_report(path):
    out = subprocess.run(["python3", "-m", "inventory", str(path)], cwd="/workspace", capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()


def test_value_is_quantity_times_price():
    assert a_float(make_store().value("A")) == 5.0


def test_adding_twice_accumulates():
    store = make_store()
    store.add(Item("A", "apple", 0.5), 5)
    assert a_quantity(store, "A") == 15


def test_cannot_remove_more_than_in_stock():
    store = make_store()
    with pytest.raises(OutOfStock):
        store.remove("B", 5)


def test_report():
    assert report_lines(make_store()) == [
        "B  bread  4  9.00",
        "A  apple  10  5.00",
        "TOTAL  14.00",
    ]


def test_removing_everything_leaves_zero():
    store = make_store()
    store.remove("B", 4)
    assert a_quantity(store, "B") == 0
    assert a_float(store.value("B")) == 0


def test_removing_unknown_item_is_out_of_stock():
    with pytest.raises(OutOfStock):
        make_store().remove("Z", 1)


def test_report_breaks_ties_by_sku():
    store = Store()
    store.add(Item("Y", "yam", 1.0), 3)
    store.add(Item("X", "xigua", 3.0), 1)
    store.add(Item("W", "walnut", 0.25), 4)
    assert report_lines(store) == ["X  xigua  1  3.00", "Y  yam  3  3.00", "W  walnut  4  1.00", "TOTAL  7.00"]


def test_command_line_report():
    assert run_report("/workspace/stock.csv") == [
        "K-1  keyboard  6  153.00",
        "C-3  cable  40  130.00",
        "M-2  mouse  10  120.00",
        "TOTAL  403.00",
    ]


def test_partial_removal_and_values_after_it():
    store = make_store()
    store.remove("A", 3)
    assert a_quantity(store, "A") == 7
    assert a_float(store.value("A")) == 3.5
    assert a_float(store.total_value()) == 12.5
    with pytest.raises(OutOfStock):
        store.remove("A", 8)
    assert a_quantity(store, "A") == 7


def test_bad_quantities_and_prices_are_rejected():
    with pytest.raises(ValueError):
        make_store().add(Item("C", "cheese", 4.0), 0)
    with pytest.raises(ValueError):
        Item("D", "dud", -1.0)


def test_report_after_changes():
    store = make_store()
    store.add(Item("C", "cheese", 4.0), 2)
    store.remove("B", 1)
    assert report_lines(store) == ["C  cheese  2  8.00", "B  bread  3  6.75", "A  apple  10  5.00", "TOTAL  19.75"]


def test_command_line_report_of_another_file(tmp_path):
    path = tmp_path / "other.csv"
    path.write_text("sku,name,unit_price,quantity\nP-9,pen,1.10,3\nN-4,notebook,2.00,5\nP-9,pen,1.10,7\nE-1,eraser,0.50,2\n")
    assert run_report(path) == ["P-9  pen  10  11.00", "N-4  notebook  5  10.00", "E-1  eraser  2  1.00", "TOTAL  22.00"]
