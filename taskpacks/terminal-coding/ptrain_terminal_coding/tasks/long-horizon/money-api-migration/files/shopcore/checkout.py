"""Checkout totals."""

from shopcore import legacy
from shopcore.discounts import discount_amount
from shopcore.tax import vat_amount


def totals(cart, discount_percent=0, vat_rate=25):
    """The four amounts of a checkout, as money values."""
    subtotal = cart.subtotal()
    discount = discount_amount(subtotal, discount_percent)
    vat = vat_amount(subtotal - discount, vat_rate)
    return {"subtotal": subtotal, "discount": discount, "vat": vat, "total": subtotal - discount + vat}


def summary(cart, discount_percent=0, vat_rate=25):
    """The same, formatted."""
    return {k: legacy.fmt(v) for k, v in totals(cart, discount_percent, vat_rate).items()}
