cat > /workspace/roman.py <<'PY'
"""Roman numerals from 1 to 3999."""

VALUES = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
          (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
TABLE = {}


def to_roman(n):
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 3999:
        raise ValueError(f"cannot write {n!r} as a Roman numeral")
    out = []
    for value, symbol in VALUES:
        count, n = divmod(n, value)
        out.append(symbol * count)
    return "".join(out)


def from_roman(s):
    if not TABLE:
        TABLE.update({to_roman(n): n for n in range(1, 4000)})
    if s not in TABLE:
        raise ValueError(f"not a canonical Roman numeral: {s!r}")
    return TABLE[s]
PY
