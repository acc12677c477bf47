cd /workspace && cat > pipeline/parse.py <<'PY'
"""Stage 1: python3 pipeline/parse.py RAW.log.gz OUT.tsv (the skipped count goes to OUT.tsv.skipped)."""

import gzip
import re
import sys
from datetime import datetime

LINE = re.compile(r'^(\S+) \S+ \S+ \[([^\]]+)\] "(\S+) (\S+) [^"]*" (\d{3}) (\d+|-) (\d+)$')


def main(src, dst):
    skipped, out = 0, []
    with gzip.open(src, "rt") as f:
        for line in f:
            m = LINE.match(line.rstrip("\n"))
            if not m:
                skipped += 1
                continue
            ts = datetime.strptime(m[2], "%d/%b/%Y:%H:%M:%S %z").strftime("%Y-%m-%dT%H:%M:%SZ")
            size = "0" if m[6] == "-" else m[6]
            out.append("\t".join([m[1], ts, m[3], m[4].split("?")[0], m[5], size, m[7]]))
    with open(dst, "w") as f:
        f.write("".join(line + "\n" for line in out))
    with open(dst + ".skipped", "w") as f:
        f.write(f"{skipped}\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
PY
cat > pipeline/load.py <<'PY'
"""Stage 2: python3 pipeline/load.py DB TSV... (rebuilt from scratch)."""

import os
import sqlite3
import sys


def main(db, tsvs):
    if os.path.exists(db):
        os.remove(db)
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE requests (ip TEXT, ts TEXT, method TEXT, path TEXT, status INTEGER, bytes INTEGER, ms INTEGER)")
    con.execute("CREATE TABLE skipped (file TEXT, lines INTEGER)")
    for tsv in tsvs:
        with open(tsv) as f:
            rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
        con.executemany("INSERT INTO requests VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [(a, b, c, d, int(e), int(g), int(h)) for a, b, c, d, e, g, h in rows])
        with open(tsv + ".skipped") as f:
            con.execute("INSERT INTO skipped VALUES (?, ?)", (os.path.basename(tsv), int(f.read())))
    con.commit()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
PY
cat > pipeline/report.py <<'PY'
"""Stage 3: python3 pipeline/report.py DB OUT.json"""

import json
import sqlite3
import sys


def percentile(con, p):
    n = con.execute("SELECT count(*) FROM requests").fetchone()[0]
    k = max(1, -(-int(p * 100) * n // 100))  # ceil(p * n) without floats
    return con.execute("SELECT ms FROM requests ORDER BY ms LIMIT 1 OFFSET ?", (k - 1,)).fetchone()[0]


def main(db, out):
    con = sqlite3.connect(db)
    total = con.execute("SELECT count(*) FROM requests").fetchone()[0]
    report = {
        "requests": total,
        "skipped_lines": con.execute("SELECT coalesce(sum(lines), 0) FROM skipped").fetchone()[0],
        "by_status": {str(s): n for s, n in con.execute("SELECT status, count(*) FROM requests GROUP BY status ORDER BY CAST(status AS TEXT)")},
        "error_rate": round(con.execute("SELECT sum(status >= 500) FROM requests").fetchone()[0] / total, 4),
        "p50_ms": percentile(con, 0.5),
        "p95_ms": percentile(con, 0.95),
        "top_paths": [list(r) for r in con.execute("SELECT path, count(*) AS n FROM requests GROUP BY path ORDER BY n DESC, path LIMIT 5")],
        "bytes_by_day": dict(con.execute("SELECT substr(ts, 1, 10) AS day, sum(bytes) FROM requests GROUP BY day ORDER BY day")),
    }
    with open(out, "w") as f:
        json.dump(report, f, indent=2)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
PY
cat > Makefile <<'MK'
RAW := $(wildcard raw/access-*.log.gz)
PARSED := $(patsubst raw/%.log.gz,build/parsed/%.tsv,$(RAW))

report: build/report.json

build/parsed/%.tsv: raw/%.log.gz pipeline/parse.py
	@mkdir -p build/parsed
	python3 pipeline/parse.py $< $@

build/requests.db: $(PARSED) pipeline/load.py
	python3 pipeline/load.py $@ $(PARSED)

build/report.json: build/requests.db pipeline/report.py
	python3 pipeline/report.py $< $@

clean:
	rm -rf build

.PHONY: report clean
MK
make report && head -c 300 build/report.json
