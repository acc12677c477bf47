cd /workspace && python3 - <<'PY'
from pathlib import Path
p = Path("tabkit/reader.py")
p.write_text(p.read_text().replace('line = line.rstrip()', 'line = line.rstrip("\\r\\n")'))
Path("tabkit/writer.py").write_text('''"""Writing rows as CSV."""

import csv


def format_field(value):
    if any(c in value for c in ',"\\r\\n'):
        return '"' + value.replace('"', '""') + '"'
    return value


def write_csv(path, rows):
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f, lineterminator="\\r\\n").writerows(rows)
''')
PY
