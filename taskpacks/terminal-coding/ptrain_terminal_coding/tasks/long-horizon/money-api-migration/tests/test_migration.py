import importlib
import random
import re
import subprocess
import sys
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

WS = Path("/workspace")


def prices():
    r = random.Random(8)
    return {f"P{i:03d}": r.choice([5, 35, 99, 105, 135, 250, 999, 1005, 1999, 4995, 12345]) for i in range(1, 41)}


def pct(cents, p):
    return int((Decimal(cents) * Decimal(str(p)) / 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def fmt(c):
    return f"{'-' if c < 0 else ''}{abs(c) // 100}.{abs(c) % 100:02d} EUR"


def expected_totals(items, book, discount, vat):
    sub = sum(book[s] * q for s, q in items.items())
    d = pct(sub, discount)
    v = pct(sub - d, vat)
    return {"subtotal": sub, "discount": d, "vat": v, "total": sub - d + v}


def book_of(table):
    from shopcore.pricing import Money, PriceBook

    return PriceBook({k: Money(v) for k, v in table.items()})


def test_legacy_is_gone_everywhere():
    assert not (WS / "shopcore/legacy.py").exists()
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("shopcore.legacy")
    for path in [*WS.glob("shopcore/**/*.py"), *WS.glob("tests/**/*.py"), WS / "README.md"]:
        assert not re.search(r"\blegacy\b", path.read_text()), path
    assert not re.search(r"\blegacy\.", (WS / "docs/migration.md").read_text())
    status = [line for line in (WS / "docs/migration.md").read_text().splitlines() if line.startswith("Status")]
    assert status and "no module uses it yet" not in status[0]


def test_checkout_is_exact_with_money():
    from shopcore.cart import Cart
    from shopcore.checkout import summary, totals
    from shopcore.pricing import Money

    table = {"A": 105, "B": 35, "C": 1005, "D": 5, "E": 12345}
    r = random.Random(3)
    for _ in range(300):
        items = {s: r.randint(1, 5) for s in r.sample(sorted(table), r.randint(1, 5))}
        discount, vat = r.choice([0, 5, 10, 12.5, 15, 33]), r.choice([25, 15, 12.5, 6, 0])
        cart = Cart(book_of(table))
        for s, q in items.items():
            cart.add(s, q)
        want = expected_totals(items, table, discount, vat)
        got = totals(cart, discount, vat)
        assert all(isinstance(v, Money) for v in got.values())
        assert {k: v.cents for k, v in got.items()} == want, (items, discount, vat)
        assert summary(cart, discount, vat) == {k: fmt(v) for k, v in want.items()}
        assert cart.subtotal() == Money(want["subtotal"]) and cart.line_total(next(iter(items))) == Money(
            table[next(iter(items))] * items[next(iter(items))]
        )
    with pytest.raises(KeyError):
        Cart(book_of(table)).add("ZZZ")


def test_discount_and_tax_helpers():
    from shopcore.discounts import discount_amount
    from shopcore.pricing import Money
    from shopcore.tax import vat_amount

    assert discount_amount(Money(105), 10) == Money(11)
    assert vat_amount(Money(1005), 12.5) == Money(126)
    assert discount_amount(Money(35), 50) == Money(18)


def test_catalog_and_reports():
    from shopcore import catalog, reports
    from shopcore.pricing import Money

    table = {"X1": 250, "X2": 99, "X3": 99, "X4": 1999}
    book = book_of(table)
    assert catalog.price_list(["X1", "X2"], book) == ["X1: 2.50 EUR", "X2: 0.99 EUR"]
    assert catalog.cheapest(["X1", "X3", "X2"], book) == "X2"
    orders = [[("X1", 3), ("X4", 1)], [("X2", 10)], []]
    assert reports.order_value(orders[0], book) == Money(2749)
    assert reports.revenue(orders, book) == Money(2749 + 990)
    assert reports.revenue_text(orders, book) == "37.39 EUR"


def test_default_price_book_and_cli():
    assert (WS / "data/prices.csv").read_text() == "sku,cents\n" + "".join(f"{k},{v}\n" for k, v in prices().items())
    table = prices()
    from shopcore.cart import Cart

    cart = Cart()
    cart.add("P003", 4)
    assert cart.subtotal().cents == table["P003"] * 4
    out = subprocess.run([sys.executable, "-m", "shopcore", "quote", "P001=2", "P007=1", "P013=3", "--discount", "12.5", "--vat", "25"],
                         cwd="/workspace", capture_output=True, text=True, timeout=60)  # fmt: skip
    assert out.returncode == 0, out.stderr
    items = {"P001": 2, "P007": 1, "P013": 3}
    t = expected_totals(items, table, 12.5, 25)
    want = [f"{s} x{q} {fmt(table[s] * q)}" for s, q in items.items()]
    want += [
        f"subtotal {fmt(t['subtotal'])}",
        f"discount -{fmt(t['discount'])}",
        f"vat {fmt(t['vat'])}",
        f"total {fmt(t['total'])}",
    ]
    assert out.stdout.splitlines() == want


def test_the_repository_tests_pass_and_use_the_new_api():
    text = (WS / "tests/test_shop.py").read_text()
    assert "pricing" in text or "Money" in text
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd="/workspace",
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stdout[-2000:]
    assert re.search(r"\b[2-9]\d* passed|\b\d{2,} passed", out.stdout), out.stdout[-500:]
