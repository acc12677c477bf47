"""DEPRECATED: the float-based money API. Use shopcore.pricing (docs/migration.md)."""

import csv
import warnings
from pathlib import Path

PRICES = Path(__file__).resolve().parent.parent / "data" / "prices.csv"
_cache = {}


def get_price(sku):
    warnings.warn("shopcore.legacy is deprecated", DeprecationWarning, stacklevel=2)
    if not _cache:
        with open(PRICES, newline="") as f:
            _cache.update({row["sku"]: int(row["cents"]) / 100 for row in csv.DictReader(f)})
    if sku not in _cache:
        raise KeyError(f"unknown sku {sku}")
    return _cache[sku]


def fmt(amount):
    return f"{amount:.2f} EUR"
