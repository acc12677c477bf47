"""Writing rows as CSV."""


def format_field(value):
    return value


def write_csv(path, rows):
    with open(path, "w", encoding="utf-8", newline="") as f:
        for row in rows:
            f.write(",".join(format_field(v) for v in row) + "\r\n")
