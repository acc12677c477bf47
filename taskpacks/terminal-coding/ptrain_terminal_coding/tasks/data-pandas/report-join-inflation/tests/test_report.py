import csv
import random
import subprocess
from collections import defaultdict
from decimal import Decimal

import pandas as pd
import pytest


def make_inputs(folder, seed):
    r = random.Random(seed)
    customers = pd.DataFrame(
        {"customer_id": range(1, 41), "segment": [r.choice(["retail", "wholesale", "online", None]) for _ in range(40)]}
    )
    addresses = []
    for cid in range(1, 41):
        for k in range(r.choice([1, 1, 2, 3])):
            addresses.append(
                {"customer_id": cid, "city": r.choice(["Oslo", "Lyon", "Porto", "Graz"]), "is_primary": int(k == 0)}
            )
    addresses = pd.DataFrame(addresses).sample(frac=1, random_state=seed).reset_index(drop=True)
    orders = pd.DataFrame(
        {
            "order_id": range(1, 301),
            "customer_id": [r.randint(1, 45) for _ in range(300)],
            "month": [f"2024-{r.randint(1, 6):02d}" for _ in range(300)],
            "amount": [round(r.uniform(5, 500), 2) for _ in range(300)],
            "status": [r.choice(["paid", "paid", "paid", "refunded"]) for _ in range(300)],
        }
    )
    customers.to_csv(f"{folder}/customers.csv", index=False)
    addresses.to_csv(f"{folder}/addresses.csv", index=False)
    orders.to_csv(f"{folder}/orders.csv", index=False)


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def reference(folder):
    segment = {int(c["customer_id"]): (c["segment"] or "unassigned") for c in read(f"{folder}/customers.csv")}
    primary = {int(a["customer_id"]): a["city"] for a in read(f"{folder}/addresses.csv") if a["is_primary"] == "1"}
    seg, city = defaultdict(lambda: [0, Decimal(0)]), defaultdict(Decimal)
    for o in read(f"{folder}/orders.csv"):
        if o["status"] != "paid":
            continue
        cid, amount = int(o["customer_id"]), Decimal(o["amount"])
        s = seg[segment.get(cid, "unassigned")]
        s[0] += 1
        s[1] += amount
        city[(primary.get(cid, "unknown"), o["month"])] += amount
    by_seg = sorted(((k, v[0], v[1]) for k, v in seg.items()), key=lambda t: (-t[2], t[0]))
    return by_seg, sorted(city.items())


@pytest.mark.parametrize("seed", [5, 11, 12])
def test_reports_match_the_ledger(tmp_path, seed):
    data, out = tmp_path / "data", tmp_path / "out"
    data.mkdir()
    make_inputs(str(data), seed)
    done = subprocess.run(
        ["python3", "-m", "salesreport", str(data), str(out)],
        cwd="/workspace",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    by_seg, by_city = reference(data)
    got = read(out / "by_segment.csv")
    assert list(got[0]) == ["segment", "orders", "revenue"]
    assert [(r["segment"], int(r["orders"]), Decimal(r["revenue"]).quantize(Decimal("0.01"))) for r in got] == [
        (s, n, v.quantize(Decimal("0.01"))) for s, n, v in by_seg
    ]
    got = read(out / "by_city.csv")
    assert list(got[0]) == ["city", "month", "revenue"]
    assert [(r["city"], r["month"], Decimal(r["revenue"]).quantize(Decimal("0.01"))) for r in got] == [
        (c, m, v.quantize(Decimal("0.01"))) for (c, m), v in by_city
    ]
