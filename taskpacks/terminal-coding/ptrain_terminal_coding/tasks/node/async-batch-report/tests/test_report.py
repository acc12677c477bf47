import json
import random
import subprocess
from collections import Counter, defaultdict

import pytest


def make_orders(tmp_path, seed, n):
    r = random.Random(seed)
    d = tmp_path / f"orders{seed}"
    d.mkdir()
    good = []
    for i in range(n):
        lines = [{"sku": r.choice(["A1", "B2", "C3", "D4", "E5"]), "qty": r.choice([1, 2, 3, "2", "5"]),
                  "price_cents": r.choice([150, 200, 999, "50"])} for _ in range(r.randint(0, 4))]  # fmt: skip
        order = {"id": i, "customer": r.choice(["ann", "bob", "cy", "dee"]), "lines": lines}
        (d / f"order-{i:04d}.json").write_text(json.dumps(order))
        good.append(order)
    (d / "broken.json").write_text('{"id": 1, "customer": ')
    (d / "nolines.json").write_text('{"id": 2, "customer": "zed"}')
    (d / "README.txt").write_text("not an order")
    return d, good


def expected(orders, errors):
    customers, skus, revenue = defaultdict(int), Counter(), 0
    for o in orders:
        customers[o["customer"]] += 0
        for line in o["lines"]:
            amount = int(line["qty"]) * int(line["price_cents"])
            revenue += amount
            customers[o["customer"]] += amount
            skus[line["sku"]] += int(line["qty"])
    top = sorted(skus.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    return {"orders": len(orders), "revenue_cents": revenue, "customers": dict(sorted(customers.items())),
            "top_skus": [list(t) for t in top], "errors": sorted(errors)}  # fmt: skip


def run(d, out):
    return subprocess.run(
        ["node", "report.js", str(d), str(out)], cwd="/workspace", capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("seed, n", [(1, 200), (2, 37)])
def test_report_with_errors(tmp_path, seed, n):
    d, orders = make_orders(tmp_path, seed, n)
    out = tmp_path / "out.json"
    done = run(d, out)
    assert done.returncode == 1, done.stderr
    got = json.loads(out.read_text())
    assert got == expected(orders, ["broken.json", "nolines.json"])
    assert list(got["customers"]) == sorted(got["customers"])


def test_clean_run_exits_zero(tmp_path):
    d, orders = make_orders(tmp_path, 3, 25)
    (d / "broken.json").unlink()
    (d / "nolines.json").unlink()
    out = tmp_path / "out.json"
    done = run(d, out)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text()) == expected(orders, [])


def test_sku_ties_sort_by_name(tmp_path):
    d = tmp_path / "ties"
    d.mkdir()
    lines = [{"sku": s, "qty": 2, "price_cents": 1} for s in ("Z", "M", "A", "Q")]
    (d / "o.json").write_text(json.dumps({"id": 1, "customer": "x", "lines": lines}))
    out = tmp_path / "out.json"
    assert run(d, out).returncode == 0
    assert json.loads(out.read_text())["top_skus"] == [["A", 2], ["M", 2], ["Q", 2]]
