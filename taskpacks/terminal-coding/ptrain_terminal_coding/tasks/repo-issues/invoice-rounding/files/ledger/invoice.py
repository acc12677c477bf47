"""An invoice: line items, an optional discount percentage and a tax rate."""

from dataclasses import dataclass

from ledger.models import LineItem


@dataclass(frozen=True)
class Invoice:
    items: tuple
    tax_rate: float
    discount_rate: float = 0.0

    @classmethod
    def from_dict(cls, data):
        items = tuple(LineItem.from_dict(i) for i in data["items"])
        return cls(items, float(data["tax_rate"]), float(data.get("discount", 0)))

    def subtotal(self):
        return sum(item.amount() for item in self.items)

    def discount(self):
        return round(self.subtotal() * self.discount_rate / 100, 2)

    def tax(self):
        return round((self.subtotal() - self.discount()) * self.tax_rate / 100, 2)

    def total(self):
        return self.subtotal() - self.discount() + self.tax()
