import json
from pathlib import Path

EXPECTED = [
    {"sku": "A-100", "name": "Hex bolt", "quantity": 250, "price": 0.15},
    {"sku": "A-101", "name": "Bolt, M4 stainless", "quantity": 120, "price": 0.32},
    {"sku": "B-200", "name": "Wood screw", "quantity": 1000, "price": 0.05},
    {"sku": "C-310", "name": 'Hinge, 3" brass', "quantity": 40, "price": 2.75},
    {"sku": "D-404", "name": "Wall plug", "quantity": 500, "price": 0.08},
    {"sku": "E-512", "name": "Cable tie", "quantity": 0, "price": 0.02},
]


def load():
    return json.loads(Path("/workspace/inventory.json").read_text())


def test_inventory_json_has_every_row_with_typed_values():
    rows = load()
    assert isinstance(rows, list) and len(rows) == len(EXPECTED)
    for row, want in zip(rows, EXPECTED):
        assert set(row) == set(want)
        assert row["sku"] == want["sku"] and row["name"] == want["name"]
        assert type(row["quantity"]) is int and row["quantity"] == want["quantity"]
        assert isinstance(row["price"], (int, float)) and not isinstance(row["price"], bool)
        assert abs(row["price"] - want["price"]) < 1e-9
