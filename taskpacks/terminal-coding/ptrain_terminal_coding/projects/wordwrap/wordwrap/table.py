"""Render rows as an aligned plain-text table."""


def column_widths(rows):
    widths = []
    for row in rows:
        for i, cell in enumerate(row):
            if i >= len(widths):
                widths.append(0)
            widths[i] = max(widths[i], len(cell))
    return widths


def table(header, rows, align=None):
    """Columns separated by two spaces; numbers right-aligned unless `align` ("l"/"r" per column) says."""
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = column_widths(cells)
    if align is None:
        align = [
            "r" if rows and all(isinstance(row[i], (int, float)) for row in rows) else "l" for i in range(len(header))
        ]
    lines = []
    for number, row in enumerate(cells):
        parts = [cell.rjust(widths[i]) if align[i] == "r" else cell.ljust(widths[i]) for i, cell in enumerate(row)]
        lines.append("  ".join(parts).rstrip())
        if number == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
