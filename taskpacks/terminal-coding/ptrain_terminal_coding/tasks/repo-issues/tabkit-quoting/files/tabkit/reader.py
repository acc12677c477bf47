"""Reading tab-separated files into lists of fields."""


def read_tsv(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip()
            if not line:
                continue
            rows.append(line.split("\t"))
    return rows
