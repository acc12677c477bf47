"""fmtlib 0.9: human-readable numbers and dates."""

import chronos

VERSION = "0.9"


def format_size(n):
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"


def format_date(text):
    return chronos.parse(text, "%Y-%m-%d").strftime("%d %b %Y")
