cd /workspace && rm shopcore/legacy.py && cat > shopcore/cart.py <<'PY'
"""A shopping cart."""

from shopcore.pricing import Money, PriceBook


class Cart:
    def __init__(self, price_book=None):
        self.book = price_book if price_book is not None else PriceBook.load()
        self.lines = {}  # sku -> quantity, in insertion order

    def add(self, sku, qty=1):
        self.book.lookup(sku)  # unknown skus raise KeyError here
        self.lines[sku] = self.lines.get(sku, 0) + qty

    def line_total(self, sku):
        return self.book.lookup(sku) * self.lines[sku]

    def subtotal(self):
        return Money.sum(self.line_total(sku) for sku in self.lines)
PY
cat > shopcore/discounts.py <<'PY'
"""Percentage discounts."""


def discount_amount(amount, percent):
    return amount.percent(percent)
PY
cat > shopcore/tax.py <<'PY'
"""VAT."""


def vat_amount(amount, rate):
    return amount.percent(rate)
PY
cat > shopcore/checkout.py <<'PY'
"""Checkout totals."""

from shopcore.discounts import discount_amount
from shopcore.tax import vat_amount


def totals(cart, discount_percent=0, vat_rate=25):
    """The four amounts of a checkout, as Money."""
    subtotal = cart.subtotal()
    discount = discount_amount(subtotal, discount_percent)
    vat = vat_amount(subtotal - discount, vat_rate)
    return {"subtotal": subtotal, "discount": discount, "vat": vat, "total": subtotal - discount + vat}


def summary(cart, discount_percent=0, vat_rate=25):
    """The same, formatted."""
    return {k: str(v) for k, v in totals(cart, discount_percent, vat_rate).items()}
PY
cat > shopcore/invoice.py <<'PY'
"""Invoices as text."""

from shopcore.checkout import totals


def render(cart, discount_percent=0, vat_rate=25):
    lines = [f"{sku} x{qty} {cart.line_total(sku)}" for sku, qty in cart.lines.items()]
    t = totals(cart, discount_percent, vat_rate)
    lines += [f"subtotal {t['subtotal']}", f"discount -{t['discount']}", f"vat {t['vat']}", f"total {t['total']}"]
    return "\n".join(lines) + "\n"
PY
cat > shopcore/catalog.py <<'PY'
"""The price list."""

from shopcore.pricing import PriceBook


def price_list(skus, price_book=None):
    book = price_book if price_book is not None else PriceBook.load()
    return [f"{sku}: {book.lookup(sku)}" for sku in skus]


def cheapest(skus, price_book=None):
    book = price_book if price_book is not None else PriceBook.load()
    return min(skus, key=lambda sku: (book.lookup(sku), sku))
PY
cat > shopcore/reports.py <<'PY'
"""Revenue reports over orders: each order is a list of (sku, qty)."""

from shopcore.pricing import Money, PriceBook


def order_value(order, price_book=None):
    book = price_book if price_book is not None else PriceBook.load()
    return Money.sum(book.lookup(sku) * qty for sku, qty in order)


def revenue(orders, price_book=None):
    book = price_book if price_book is not None else PriceBook.load()
    return Money.sum(order_value(o, book) for o in orders)


def revenue_text(orders, price_book=None):
    return str(revenue(orders, price_book))
PY
sed -i 's/quote.add_argument("--discount", type=float, default=0)/quote.add_argument("--discount", default="0")/; s/quote.add_argument("--vat", type=float, default=25)/quote.add_argument("--vat", default="25")/' shopcore/__main__.py
cat > tests/test_shop.py <<'PY'
"""The repository's own tests (python3 -m pytest tests)."""

from shopcore.cart import Cart
from shopcore.checkout import summary, totals
from shopcore.pricing import Money, PriceBook


def test_cart_subtotal():
    cart = Cart()
    cart.add("P001", 2)
    assert cart.subtotal() == PriceBook.load().lookup("P001") * 2


def test_summary_has_four_amounts():
    cart = Cart()
    cart.add("P002")
    assert set(summary(cart)) == {"subtotal", "discount", "vat", "total"}


def test_exact_percentages():
    cart = Cart(PriceBook({"A": Money(105)}))
    cart.add("A")
    assert totals(cart, 10, 25)["discount"] == Money(11)
PY
python3 - <<'PY'
from pathlib import Path
p = Path("README.md")
p.write_text(p.read_text().replace("""Money: `shopcore.pricing` (Money in integer cents, PriceBook). `shopcore.legacy` is the old
float-based API, deprecated since 3.0 (see docs/migration.md).""", """Money: `shopcore.pricing` (Money in integer cents, PriceBook); see docs/migration.md for how 3.0
replaced the old float API."""))
m = Path("docs/migration.md")
m.write_text(m.read_text().replace("# Migrating from shopcore.legacy to shopcore.pricing", "# Migrating from the float API to shopcore.pricing")
             .replace("| legacy (floats, euros)            |", "| before 3.0 (floats, euros)        |")
             .replace("`legacy.get_price(sku)`", "`get_price(sku)`").replace("`legacy.fmt(3.5)`", "`fmt(3.5)`")
             .replace("Status: pricing.py is done; no module uses it yet.", "Status: done in 3.0; every module uses shopcore.pricing and the float module is deleted."))
PY
python3 -m pytest -q -p no:cacheprovider tests && python3 -m shopcore quote P001=2 P007=1 --discount 10 --vat 25
