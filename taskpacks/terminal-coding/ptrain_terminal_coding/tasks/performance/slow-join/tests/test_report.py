import csv
import random
import subprocess
from collections import defaultdict


def write_inputs(directory, seed, n_customers, n_orders, n_countries):
    r = random.Random(seed)
    countries = [f"C{chr(65 + i // 26)}{chr(65 + i % 26)}" for i in range(n_countries)]
    ids = r.sample(range(1, 10 * n_customers), n_customers)
    customers = {}
    with open(directory / "customers.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "name", "country"])
        for i in ids:
            customers[str(i)] = r.choice(countries)
            w.writerow([i, f"customer, no. {i}", customers[str(i)]])
    orders = []
    with open(directory / "orders.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "customer_id", "amount"])
        for k in range(n_orders):
            cid = r.choice(ids) if r.random() < 0.97 else r.randint(10 * n_customers, 20 * n_customers)
            amount = r.randint(1, 2000)
            orders.append((str(cid), amount))
            w.writerow([k + 1, cid, amount])
    totals, counts, unknown = defaultdict(int), defaultdict(int), 0
    for cid, amount in orders:
        if cid in customers:
            totals[customers[cid]] += amount
            counts[customers[cid]] += 1
        else:
            unknown += 1
    rows = sorted(totals, key=lambda c: (-totals[c], c))
    return [f"{c} {totals[c]} {counts[c]}" for c in rows] + [f"UNKNOWN {unknown}"]


def run(directory, timeout):
    return subprocess.run(
        ["python3", "/workspace/report.py", str(directory / "customers.csv"), str(directory / "orders.csv")],
        capture_output=True, text=True, timeout=timeout,
    )


def test_small_input_gives_the_documented_report(tmp_path):
    expected = write_inputs(tmp_path, 1, 40, 300, 5)
    out = run(tmp_path, 30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == expected


def test_ties_are_sorted_by_country(tmp_path):
    (tmp_path / "customers.csv").write_text("id,name,country\n1,a,SE\n2,b,AT\n3,c,NO\n")
    (tmp_path / "orders.csv").write_text("id,customer_id,amount\n1,1,10\n2,2,10\n3,3,5\n4,3,5\n5,9,1\n")
    out = run(tmp_path, 30)
    assert out.stdout.splitlines() == ["AT 10 1", "NO 10 2", "SE 10 1", "UNKNOWN 1"]


def test_large_input_within_10_seconds(tmp_path):
    expected = write_inputs(tmp_path, 2, 12000, 50000, 40)
    out = run(tmp_path, 10)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == expected
