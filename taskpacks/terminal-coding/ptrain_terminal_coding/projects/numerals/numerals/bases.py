"""Integers in bases 2 to 36, digit grouping, digit sums and English ordinals."""

DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def check_base(base):
    if base < 2 or base > 36:
        raise ValueError(f"base must be between 2 and 36, got {base}")


def to_base(number, base):
    check_base(base)
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    number = abs(number)
    digits = []
    while number > 0:
        number, remainder = divmod(number, base)
        digits.append(DIGITS[remainder])
    return sign + "".join(reversed(digits))


def from_base(text, base):
    check_base(base)
    text = text.strip().lower()
    negative = text.startswith("-")
    if negative:
        text = text[1:]
    if not text:
        raise ValueError("no digits")
    value = 0
    for char in text:
        digit = DIGITS.find(char)
        if digit < 0 or digit >= base:
            raise ValueError(f"{char!r} is not a digit in base {base}")
        value = value * base + digit
    return -value if negative else value


def group_digits(number, size=3, separator=","):
    """1234567 -> '1,234,567': groups of `size` counted from the right."""
    text = str(abs(number))
    groups = []
    end = len(text)
    for start in range(len(text) - size, -size, -size):
        groups.append(text[max(start, 0) : end])
        end = start
    sign = "-" if number < 0 else ""
    return sign + separator.join(reversed(groups))


def digit_sum(number, base=10):
    check_base(base)
    number = abs(number)
    total = 0
    while number:
        total += number % base
        number //= base
    return total


def ordinal(number):
    """1 -> '1st', 2 -> '2nd', 11 -> '11th', 23 -> '23rd'."""
    if 10 <= number % 100 <= 20:
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"
