import gzip
import json
import os
import random
import re
import shutil
import sqlite3
import subprocess
import time
from collections import Counter

import pytest


def make_logs(folder, seed, days=3):
    r = random.Random(seed)
    paths = ["/", "/login", "/api/items", "/api/items/7", "/static/app.js", "/search?q=a+b&page=2", "/api/orders"]
    for day in range(1, days + 1):
        lines = []
        for _i in range(r.randint(150, 300)):
            ip = f"10.0.{r.randint(0, 3)}.{r.randint(1, 30)}"
            t = f"{day:02d}/Mar/2024:{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d} +0000"
            method = r.choice(["GET", "GET", "GET", "POST"])
            status = r.choice([200, 200, 200, 201, 304, 404, 500, 503])
            size = "-" if status == 304 else str(r.randint(100, 90000))
            ms = r.randint(1, 2500)
            lines.append(f'{ip} - - [{t}] "{method} {r.choice(paths)} HTTP/1.1" {status} {size} {ms}')
            if r.random() < 0.02:
                lines.append("garbage line without the format")
        with gzip.open(f"{folder}/access-2024-03-{day:02d}.log.gz", "wt") as f:
            f.write("\n".join(lines) + "\n")


LINE = re.compile(
    r'^(\S+) - - \[(\d\d)/Mar/2024:(\d\d):(\d\d):(\d\d) \+0000\] "(\S+) (\S+) HTTP/1\.1" (\d{3}) (\d+|-) (\d+)$'
)


def reference(raw):
    rows, skipped = [], 0
    for path in sorted(raw.glob("access-*.log.gz")):
        for line in gzip.open(path, "rt").read().splitlines():
            m = LINE.match(line)
            if not m:
                skipped += 1
                continue
            rows.append({"day": f"2024-03-{m[2]}", "path": m[7].split("?")[0], "status": int(m[8]),
                         "bytes": 0 if m[9] == "-" else int(m[9]), "ms": int(m[10])})  # fmt: skip
    ms = sorted(r["ms"] for r in rows)

    def rank(p):
        import math

        return ms[max(1, math.ceil(p * len(ms))) - 1]

    paths = Counter(r["path"] for r in rows)
    days = Counter()
    for r in rows:
        days[r["day"]] += r["bytes"]
    return {"requests": len(rows), "skipped_lines": skipped,
            "by_status": dict(sorted(Counter(str(r["status"]) for r in rows).items())),
            "error_rate": round(sum(r["status"] >= 500 for r in rows) / len(rows), 4), "p50_ms": rank(0.5), "p95_ms": rank(0.95),
            "top_paths": [list(x) for x in sorted(paths.items(), key=lambda kv: (-kv[1], kv[0]))[:5]],
            "bytes_by_day": dict(sorted(days.items()))}  # fmt: skip


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "ws"
    shutil.copytree(
        "/workspace", root, symlinks=True, ignore=shutil.ignore_patterns("raw", "build", ".*")
    )  # links stay links
    (root / "raw").mkdir()
    make_logs(str(root / "raw"), 42, days=4)
    return root


def age(tree):
    """Sources 200 s old, build outputs 100 s old: a consistent, up-to-date tree."""
    old = time.time() - 100
    for p in tree.rglob("*"):
        if p.is_file():
            t = old if "build" in p.relative_to(tree).parts else old - 100
            os.utime(p, (t, t))
    return old


def make(root, *args):
    return subprocess.run(["make", "-C", str(root), *args], capture_output=True, text=True, timeout=240)


def test_report_matches(tree):
    out = make(tree, "report")
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert json.loads((tree / "build/report.json").read_text()) == reference(tree / "raw")
    assert sorted(p.name for p in (tree / "build/parsed").glob("*.tsv")) == [
        f"access-2024-03-{d:02d}.tsv" for d in range(1, 5)
    ]
    first = (tree / "build/parsed/access-2024-03-01.tsv").read_text().splitlines()[0].split("\t")
    assert len(first) == 7 and re.fullmatch(r"2024-03-01T\d\d:\d\d:\d\dZ", first[1]) and "?" not in first[3]
    con = sqlite3.connect(tree / "build/requests.db")
    cols = [r[1] for r in con.execute("PRAGMA table_info(requests)")]
    assert cols == ["ip", "ts", "method", "path", "status", "bytes", "ms"]
    assert con.execute("SELECT typeof(status), typeof(bytes), typeof(ms) FROM requests LIMIT 1").fetchone() == (
        "integer",
        "integer",
        "integer",
    )


def test_incremental(tree):
    assert make(tree, "report").returncode == 0
    assert make(tree, "-q", "report").returncode == 0, "a second make report must have nothing to do"
    age(tree)
    before = {p.name: p.stat().st_mtime for p in (tree / "build/parsed").glob("*.tsv")}
    extra = tree.parent / "extra"
    extra.mkdir()
    make_logs(str(extra), 43, days=5)
    shutil.copy(extra / "access-2024-03-05.log.gz", tree / "raw")
    out = make(tree, "report")
    assert out.returncode == 0, out.stderr[-2000:]
    after = {p.name: p.stat().st_mtime for p in (tree / "build/parsed").glob("*.tsv")}
    assert set(after) == set(before) | {"access-2024-03-05.tsv"}
    assert all(after[n] == before[n] for n in before), "only the new log may be re-parsed"
    assert json.loads((tree / "build/report.json").read_text()) == reference(tree / "raw")


def test_touching_one_log_reparses_it_and_skipped_survives(tree):
    assert make(tree, "report").returncode == 0
    want = json.loads((tree / "build/report.json").read_text())
    old = age(tree)
    os.utime(tree / "raw/access-2024-03-02.log.gz", None)
    out = make(tree, "report")
    assert out.returncode == 0
    changed = [p.name for p in (tree / "build/parsed").glob("*.tsv") if p.stat().st_mtime > old + 1]
    assert changed == ["access-2024-03-02.tsv"]
    assert json.loads((tree / "build/report.json").read_text()) == want


def test_clean(tree):
    assert make(tree, "report").returncode == 0
    assert make(tree, "clean").returncode == 0
    assert not (tree / "build").exists()
