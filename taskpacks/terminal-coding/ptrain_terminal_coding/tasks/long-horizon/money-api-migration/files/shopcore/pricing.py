"""Money in integer cents and the price book (release 3.0 moves every module onto it)."""

import csv
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

DEFAULT_PRICES = Path(__file__).resolve().parent.parent / "data" / "prices.csv"


@dataclass(frozen=True, order=True)
class Money:
    cents: int

    def __add__(self, other):
        return Money(self.cents + other.cents)

    def __sub__(self, other):
        return Money(self.cents - other.cents)

    def __mul__(self, n):
        if not isinstance(n, int):
            raise TypeError("Money can only be multiplied by an int")
        return Money(self.cents * n)

    def percent(self, p):
        """p percent of this amount (p may be a float or str like 12.5), rounded half-up to the cent."""
        exact = Decimal(self.cents) * Decimal(str(p)) / 100
        return Money(int(exact.quantize(Decimal(1), rounding=ROUND_HALF_UP)))

    @staticmethod
    def sum(items):
        total = Money(0)
        for m in items:
            total = total + m
        return total

    def __str__(self):
        sign = "-" if self.cents < 0 else ""
        return f"{sign}{abs(self.cents) // 100}.{abs(self.cents) % 100:02d} EUR"


class PriceBook:
    def __init__(self, prices):
        self.prices = dict(prices)

    @classmethod
    def load(cls, path=DEFAULT_PRICES):
        with open(path, newline="") as f:
            return cls({row["sku"]: Money(int(row["cents"])) for row in csv.DictReader(f)})

    def lookup(self, sku):
        try:
            return self.prices[sku]
        except KeyError:
            raise KeyError(f"unknown sku {sku}") from None
