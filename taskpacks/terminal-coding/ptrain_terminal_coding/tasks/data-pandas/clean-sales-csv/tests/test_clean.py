import csv
import json
import random
import re
import subprocess
from decimal import Decimal

import pytest


def messy(path, seed, n=400):
    r = random.Random(seed)
    names = ["alice smith", "BOB JONES", "  carol  white ", "dan o'neil", "Eve Adams"]
    months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    rows = []
    for i in range(n):
        y, m, d = r.choice([2023, 2024]), r.randint(1, 12), r.randint(1, 28)
        date = r.choice([f"{y}-{m:02d}-{d:02d}", f"{m:02d}/{d:02d}/{y}", f"{d} {months[m - 1]} {y}"])
        cents = r.randint(-5000, 500000)
        style = r.choice(["plain", "dollar", "comma"])
        value = f"{abs(cents) // 100}.{abs(cents) % 100:02d}"
        if style == "dollar":
            value = "$" + value
        elif style == "comma":
            value = f"${abs(cents) // 100:,}.{abs(cents) % 100:02d}"
        if cents < 0:
            value = f"({value})"
        name = r.choice(names)
        name = r.choice([name, name.upper(), name.lower(), " " + name + "  "])
        region = r.choice(["north", "South", " east", "WEST", "", "n/a"])
        rows.append([f"T{i:05d}", date, name, region, value])
        if r.random() < 0.05:
            rows.append(list(rows[-1]))
    r.shuffle(rows)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["txn", "date", "customer", "region", "amount"])
        w.writerows(rows)


MONTHS = {
    m: i for i, m in enumerate(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1)
}


def iso(text):
    if re.fullmatch(r"\d{4}-\d\d-\d\d", text):
        return text
    if m := re.fullmatch(r"(\d\d)/(\d\d)/(\d{4})", text):
        return f"{m[3]}-{m[1]}-{m[2]}"
    d, mon, y = text.split()
    return f"{y}-{MONTHS[mon]:02d}-{int(d):02d}"


def money(text):
    neg = text.startswith("(")
    v = Decimal(text.strip("()").replace("$", "").replace(",", ""))
    return -v if neg else v


def reference(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))[1:]
    seen, out, dups = set(), [], 0
    for row in rows:
        key = tuple(row)
        if key in seen:
            dups += 1
            continue
        seen.add(key)
        txn, date, customer, region, amount = row
        region = region.strip().lower()
        region = "unknown" if region in ("", "n/a") else region
        out.append([txn, iso(date), " ".join(customer.split()).title(), region, money(amount)])
    out.sort(key=lambda r: (r[1], r[0]))
    by_region = {}
    for r in out:
        by_region[r[3]] = by_region.get(r[3], Decimal(0)) + r[4]
    summary = {"rows": len(out), "duplicates_dropped": dups, "total": f"{sum(r[4] for r in out):.2f}",
               "by_region": {k: f"{v:.2f}" for k, v in sorted(by_region.items())}}  # fmt: skip
    return [[*r[:4], f"{r[4]:.2f}"] for r in out], summary


@pytest.mark.parametrize("seed", [2024, 7, 99])
def test_cleaning(tmp_path, seed):
    src, dst = tmp_path / "in.csv", tmp_path / "out.csv"
    messy(src, seed, n=300 + seed % 50)
    done = subprocess.run(
        ["python3", "/workspace/clean_sales.py", str(src), str(dst)],
        cwd="/workspace",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows, summary = reference(src)
    with open(dst, newline="") as f:
        got = list(csv.reader(f))
    assert got[0] == ["txn", "date", "customer", "region", "amount"]
    assert got[1:] == rows
    assert json.loads((tmp_path / "out.csv.summary.json").read_text()) == summary
