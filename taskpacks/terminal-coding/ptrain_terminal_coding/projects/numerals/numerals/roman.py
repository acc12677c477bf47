"""Roman numerals from 1 to 3999, strictly formed (no IIII, no IC)."""

VALUES = [
    (1000, "M"),
    (900, "CM"),
    (500, "D"),
    (400, "CD"),
    (100, "C"),
    (90, "XC"),
    (50, "L"),
    (40, "XL"),
    (10, "X"),
    (9, "IX"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
]
LETTERS = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def to_roman(number):
    if not isinstance(number, int) or isinstance(number, bool):
        raise TypeError("a Roman numeral needs an int")
    if number < 1 or number > 3999:
        raise ValueError("Roman numerals go from 1 to 3999")
    parts = []
    for value, letters in VALUES:
        count, number = divmod(number, value)
        parts.append(letters * count)
    return "".join(parts)


def from_roman(text):
    text = text.strip().upper()
    if not text or any(char not in LETTERS for char in text):
        raise ValueError(f"not a Roman numeral: {text!r}")
    total = 0
    for i, char in enumerate(text):
        value = LETTERS[char]
        if i + 1 < len(text) and LETTERS[text[i + 1]] > value:
            total -= value
        else:
            total += value
    if total < 1 or total > 3999 or to_roman(total) != text:
        raise ValueError(f"malformed Roman numeral: {text!r}")
    return total
