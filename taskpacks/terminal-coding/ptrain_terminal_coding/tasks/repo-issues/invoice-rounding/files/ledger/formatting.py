"""The printed invoice."""


def money(value):
    return "%.2f" % value


def render(invoice):
    lines = [
        f"{item.sku:<8}{item.quantity:>4} x {money(item.unit_price):>9} = {money(item.amount()):>10}"
        for item in invoice.items
    ]
    lines.append(f"{'subtotal':<27}{money(invoice.subtotal()):>10}")
    if invoice.discount_rate:
        lines.append(f"{'discount':<27}{money(invoice.discount()):>10}")
    lines.append(f"{'tax':<27}{money(invoice.tax()):>10}")
    lines.append(f"{'total':<27}{money(invoice.total()):>10}")
    return "\n".join(lines)
