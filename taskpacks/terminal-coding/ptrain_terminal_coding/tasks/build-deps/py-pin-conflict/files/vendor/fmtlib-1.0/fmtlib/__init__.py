"""fmtlib 1.0: human-readable numbers and dates. format_size() is gone: use human_size() (binary units)."""

import chronos

VERSION = "1.0"


def human_size(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def format_date(day):
    return day.strftime("%d %b %Y")
