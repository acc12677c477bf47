"""Percentage discounts."""


def discount_amount(amount, percent):
    return round(amount * percent / 100, 2)
