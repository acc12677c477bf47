from inventory.store import Store


def report(store: Store) -> str:
    """One line per item, `SKU  NAME  QTY  VALUE`, highest stock value first (ties by SKU),
    values with two decimals; then a line `TOTAL  VALUE`."""
    rows = sorted(store.items, key=lambda sku: (store.value(sku), sku))
    lines = [
        f"{sku}  {store.items[sku].name}  {store.quantities[sku]}  {store.value(sku):.2f}" for sku in rows
    ]
    lines.append(f"TOTAL  {store.total_value():.1f}")
    return "\n".join(lines)
