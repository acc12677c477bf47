"""The price list."""

from shopcore import legacy


def price_list(skus):
    return [f"{sku}: {legacy.fmt(legacy.get_price(sku))}" for sku in skus]


def cheapest(skus):
    return min(skus, key=lambda sku: (legacy.get_price(sku), sku))
