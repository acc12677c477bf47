cd /workspace && python3 - <<'PY'
from pathlib import Path
m = Path("ledger/models.py")
m.write_text(m.read_text().replace('from dataclasses import dataclass', 'from dataclasses import dataclass\nfrom decimal import Decimal')
             .replace('unit_price: float', 'unit_price: Decimal').replace('float(data["unit_price"])', 'Decimal(str(data["unit_price"]))'))
Path("ledger/invoice.py").write_text('''"""An invoice: line items, an optional discount percentage and a tax rate."""

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from ledger.models import LineItem

CENT = Decimal("0.01")


def cents(value):
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class Invoice:
    items: tuple
    tax_rate: Decimal
    discount_rate: Decimal = Decimal(0)

    @classmethod
    def from_dict(cls, data):
        items = tuple(LineItem.from_dict(i) for i in data["items"])
        return cls(items, Decimal(str(data["tax_rate"])), Decimal(str(data.get("discount", "0"))))

    def _subtotal(self):
        return sum((item.amount() for item in self.items), Decimal(0))

    def subtotal(self):
        return cents(self._subtotal())

    def discount(self):
        return cents(self._subtotal() * self.discount_rate / 100)

    def tax(self):
        return cents((self._subtotal() - self.discount()) * self.tax_rate / 100)

    def total(self):
        return cents(self._subtotal() - self.discount() + self.tax())
''')
f = Path("ledger/formatting.py")
f.write_text(f.read_text().replace('return "%.2f" % value', 'return f"{value:.2f}"'))
PY
