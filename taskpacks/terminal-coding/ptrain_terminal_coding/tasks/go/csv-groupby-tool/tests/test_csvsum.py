import csv
import io
import os
import random
import subprocess
from collections import defaultdict
from decimal import Decimal

import pytest

ENV = {
    **os.environ,
    "GOCACHE": "/tmp/gocache-cs",
    "GOPATH": "/tmp/gopath-cs",
    "GOPROXY": "off",
    "GOFLAGS": "-mod=readonly",
}


@pytest.fixture(scope="module")
def exe(tmp_path_factory):
    out = tmp_path_factory.mktemp("bin") / "csvsum"
    done = subprocess.run(
        ["go", "build", "-o", str(out), "."], cwd="/workspace", env=ENV, capture_output=True, text=True, timeout=200
    )
    assert done.returncode == 0, done.stderr
    return out


def run(exe, stdin, *args):
    return subprocess.run([str(exe), *args], input=stdin, capture_output=True, text=True, timeout=30)


def expected(rows, by, col, header_name):
    totals, counts = defaultdict(Decimal), defaultdict(int)
    for row in rows:
        totals[row[by]] += Decimal(row[col] or "0")
        counts[row[by]] += 1
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([header_name, "sum", "count"])
    for value in sorted(totals, key=lambda v: (-totals[v], v.encode())):
        w.writerow([value, f"{totals[value]:.2f}", counts[value]])
    return buf.getvalue()


def make(seed, n, sep=","):
    r = random.Random(seed)
    regions = ["north", "south", "east, west", 'the "hub"', "multi\nline", "Zeta", "alpha"]
    rows = []
    for i in range(n):
        amount = r.choice(
            ["", f"{r.randint(-500, 5000) / 100}", str(r.randint(0, 40)), f"{r.randint(0, 9)}.5", "-0.75"]
        )
        rows.append({"id": str(i), "region": r.choice(regions), "amount": amount, "note": r.choice(["ok", "a,b", ""])})
    buf = io.StringIO()
    w = csv.DictWriter(
        buf, fieldnames=["id", "region", "amount", "note"], delimiter=sep, lineterminator="\r\n" if seed % 2 else "\n"
    )
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue(), rows


def test_simple_example(exe):
    data = "city,amount\nOslo,10\nRome,2.5\nOslo,-0.5\nParis,12\n"
    out = run(exe, data, "-by", "city", "-sum", "amount")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "city,sum,count\nParis,12.00,1\nOslo,9.50,2\nRome,2.50,1\n"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_files_with_quoting(exe, seed):
    data, rows = make(seed, 300)
    out = run(exe, data, "-by", "region", "-sum", "amount")
    assert out.returncode == 0, out.stderr
    assert out.stdout == expected(rows, "region", "amount", "region")


def test_other_separator(exe):
    data, rows = make(4, 120, sep=";")
    out = run(exe, data, "-sep", ";", "-by", "note", "-sum", "amount")
    assert out.returncode == 0, out.stderr
    assert out.stdout == expected(rows, "note", "amount", "note")


def test_ties_sort_by_value(exe):
    out = run(exe, "k,v\nb,1\na,1\nc,2\nB,1\n", "-by", "k", "-sum", "v")
    assert out.stdout == "k,sum,count\nc,2.00,1\nB,1.00,1\na,1.00,1\nb,1.00,1\n"


def test_errors(exe):
    out = run(exe, "a,b\n1,2\n", "-by", "zzz", "-sum", "b")
    assert out.returncode == 2 and out.stdout == "" and out.stderr.strip()
    out = run(exe, 'a,b\nx,1\n"y\nz",2\nw,abc\n', "-by", "a", "-sum", "b")
    assert out.returncode == 2 and out.stdout == "" and "5" in out.stderr
    out = run(exe, 'a,b\n"x,1\n', "-by", "a", "-sum", "b")
    assert out.returncode == 2 and out.stdout == ""
