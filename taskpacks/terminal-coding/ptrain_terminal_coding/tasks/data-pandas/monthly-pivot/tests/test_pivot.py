import csv
import random
import subprocess
from collections import defaultdict
from decimal import Decimal

import pytest


def make_inputs(folder, seed):
    r = random.Random(seed)
    regions = ["APAC", "EMEA", "LATAM", "NA"]
    with open(f"{folder}/customers.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["customer_id", "region"])
        for c in range(1, 31):
            w.writerow([c, r.choice(regions)])
    with open(f"{folder}/orders.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["order_id", "customer_id", "ordered_at", "amount_eur"])
        for o in range(1, 401):
            month = r.choice([m for m in range(1, 13) if m != 7])  # nobody orders in July
            w.writerow(
                [
                    o,
                    r.randint(1, 32),
                    f"2024-{month:02d}-{r.randint(1, 28):02d}T{r.randint(0, 23):02d}:15:00",
                    f"{r.randint(100, 99999) / 100:.2f}",
                ]
            )


def reference(folder):
    with open(f"{folder}/customers.csv", newline="") as f:
        region = {row["customer_id"]: row["region"] for row in csv.DictReader(f)}
    cells = defaultdict(Decimal)
    with open(f"{folder}/orders.csv", newline="") as f:
        for row in csv.DictReader(f):
            cells[(region.get(row["customer_id"], "UNKNOWN"), row["ordered_at"][:7])] += Decimal(row["amount_eur"])
    months = [f"2024-{m:02d}" for m in range(1, 13)]
    rows = [["region", *months, "total"]]
    for reg in sorted({k[0] for k in cells}):
        vals = [cells[(reg, m)] for m in months]
        rows.append([reg, *(f"{v:.2f}" for v in vals), f"{sum(vals):.2f}"])
    cols = [sum(cells[(k, m)] for k in {k[0] for k in cells}) for m in months]
    rows.append(["ALL", *(f"{v:.2f}" for v in cols), f"{sum(cols):.2f}"])
    return rows


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pivot(tmp_path, seed):
    make_inputs(str(tmp_path), seed)
    out = tmp_path / "out.csv"
    done = subprocess.run(["python3", "/workspace/pivot.py", str(tmp_path / "customers.csv"), str(tmp_path / "orders.csv"), str(out)],
                          cwd="/workspace", capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    with open(out, newline="") as f:
        assert list(csv.reader(f)) == reference(tmp_path)
