cd /workspace && python3 - <<'PY'
from pathlib import Path

store = Path("inventory/store.py")
src = store.read_text()
src = src.replace("self.quantities[item.sku] = quantity", "self.quantities[item.sku] = self.quantities.get(item.sku, 0) + quantity")
src = src.replace("if quantity > have + 1:", "if quantity > have:")
src = src.replace("return self.items[sku].unit_price\n", "return self.items[sku].unit_price * self.quantities[sku]\n")
store.write_text(src)

report = Path("inventory/report.py")
src = report.read_text()
src = src.replace("key=lambda sku: (store.value(sku), sku)", "key=lambda sku: (-store.value(sku), sku)")
src = src.replace("{store.total_value():.1f}", "{store.total_value():.2f}")
report.write_text(src)
PY
