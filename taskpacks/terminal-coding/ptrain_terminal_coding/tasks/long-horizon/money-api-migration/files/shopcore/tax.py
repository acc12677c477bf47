"""VAT."""


def vat_amount(amount, rate):
    return round(amount * rate / 100, 2)
