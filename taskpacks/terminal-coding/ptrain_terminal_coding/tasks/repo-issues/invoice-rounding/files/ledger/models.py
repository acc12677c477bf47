"""Line items."""

from dataclasses import dataclass


@dataclass(frozen=True)
class LineItem:
    sku: str
    quantity: int
    unit_price: float

    @classmethod
    def from_dict(cls, data):
        return cls(data["sku"], int(data["quantity"]), float(data["unit_price"]))

    def amount(self):
        return self.quantity * self.unit_price
