"""Checks on the shape of a table."""


class ShapeError(ValueError):
    pass


def check_rows(rows):
    """The header and the data rows; every row must be as wide as the header."""
    if not rows:
        raise ShapeError("empty table")
    header, data = rows[0], rows[1:]
    for number, row in enumerate(data, start=2):
        if len(row) != len(header):
            raise ShapeError(f"row {number} has {len(row)} fields, header has {len(header)}")
    return header, data
