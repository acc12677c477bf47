"""Revenue reports over orders: each order is a list of (sku, qty)."""

from shopcore import legacy


def order_value(order):
    return sum(legacy.get_price(sku) * qty for sku, qty in order)


def revenue(orders):
    return sum(order_value(o) for o in orders)


def revenue_text(orders):
    return legacy.fmt(revenue(orders))
