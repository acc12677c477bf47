import csv
import math
import random
import subprocess
from collections import defaultdict

import pytest


def make_inputs(folder, seed):
    r = random.Random(seed)
    skus = [f"SKU-{i:03d}" for i in range(1, 61)]
    with open(f"{folder}/stock.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["sku", "warehouse", "on_hand", "lead_time_days"])
        for sku in skus:
            for wh in r.sample(["OSL", "LYS", "OPO"], r.randint(1, 3)):
                w.writerow([sku, wh, r.randint(0, 400), r.choice([3, 7, 14, 21])])
    with open(f"{folder}/sales.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["date", "sku", "warehouse", "units"])
        for day in range(1, 29):
            for _ in range(r.randint(20, 60)):
                w.writerow(
                    [
                        f"2024-02-{day:02d}",
                        r.choice(skus[:55] + ["SKU-999"]),
                        r.choice(["OSL", "LYS", "OPO"]),
                        r.randint(1, 12),
                    ]
                )


def reference(folder):
    with open(f"{folder}/sales.csv", newline="") as f:
        sold = defaultdict(int)
        for row in csv.DictReader(f):
            sold[(row["sku"], row["warehouse"])] += int(row["units"])
    rows = []
    with open(f"{folder}/stock.csv", newline="") as f:
        for row in csv.DictReader(f):
            key, on_hand, lead = (row["sku"], row["warehouse"]), int(row["on_hand"]), int(row["lead_time_days"])
            v = sold[key] / 28
            if v == 0:
                continue
            cover = on_hand / v
            if cover < lead + 7:
                rows.append(
                    (cover, key[0], key[1], on_hand, round(v, 3), round(cover, 1), math.ceil(v * (lead + 28) - on_hand))
                )
    rows.sort()
    return [r[1:] for r in rows]


@pytest.mark.parametrize("seed", [3, 8, 21])
def test_restock(tmp_path, seed):
    make_inputs(str(tmp_path), seed)
    out = tmp_path / "out.csv"
    done = subprocess.run(["python3", "/workspace/restock.py", str(tmp_path / "stock.csv"), str(tmp_path / "sales.csv"), str(out)],
                          cwd="/workspace", capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    with open(out, newline="") as f:
        got = list(csv.reader(f))
    assert got[0] == ["sku", "warehouse", "on_hand", "velocity", "days_of_cover", "suggested_units"]
    want = reference(tmp_path)
    assert len(got) - 1 == len(want) and want
    for g, w in zip(got[1:], want, strict=True):
        assert g[:3] == [w[0], w[1], str(w[2])] and g[5] == str(w[5]), (g, w)
        assert math.isclose(float(g[3]), w[3], abs_tol=1e-9) and math.isclose(float(g[4]), w[4], abs_tol=1e-9), (g, w)
