"""A shopping cart."""

from shopcore import legacy


class Cart:
    def __init__(self):
        self.lines = {}  # sku -> quantity, in insertion order

    def add(self, sku, qty=1):
        legacy.get_price(sku)  # unknown skus raise KeyError here
        self.lines[sku] = self.lines.get(sku, 0) + qty

    def line_total(self, sku):
        return legacy.get_price(sku) * self.lines[sku]

    def subtotal(self):
        return sum(self.line_total(sku) for sku in self.lines)
