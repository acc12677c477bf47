"""Invoices as text."""

from shopcore import legacy
from shopcore.checkout import totals


def render(cart, discount_percent=0, vat_rate=25):
    lines = [f"{sku} x{qty} {legacy.fmt(cart.line_total(sku))}" for sku, qty in cart.lines.items()]
    t = totals(cart, discount_percent, vat_rate)
    lines += [f"subtotal {legacy.fmt(t['subtotal'])}", f"discount -{legacy.fmt(t['discount'])}",
              f"vat {legacy.fmt(t['vat'])}", f"total {legacy.fmt(t['total'])}"]  # fmt: skip
    return "\n".join(lines) + "\n"
