cat > /workspace/pivot.py <<'PY'
"""Monthly revenue by region: python3 pivot.py CUSTOMERS.csv ORDERS.csv OUT.csv"""

import sys

import pandas as pd


def main(customers_path, orders_path, out_path):
    customers = pd.read_csv(customers_path, dtype=str, keep_default_na=False)
    orders = pd.read_csv(orders_path, dtype=str, keep_default_na=False)
    df = orders.merge(customers, on="customer_id", how="left", validate="many_to_one")
    df["region"] = df["region"].fillna("UNKNOWN")
    df["month"] = df["ordered_at"].str[:7]
    df["cents"] = df["amount_eur"].map(lambda s: int(round(float(s) * 100)))
    months = [f"2024-{m:02d}" for m in range(1, 13)]
    table = df.pivot_table(index="region", columns="month", values="cents", aggfunc="sum", fill_value=0)
    table = table.reindex(columns=months, fill_value=0).sort_index()
    table["total"] = table.sum(axis=1)
    table.loc["ALL"] = table.sum(axis=0)
    out = (table / 100).map(lambda v: f"{v:.2f}") if hasattr(table, "map") else (table / 100).applymap(lambda v: f"{v:.2f}")
    out.index.name = "region"
    out.to_csv(out_path)


if __name__ == "__main__":
    main(*sys.argv[1:4])
PY
cd /workspace && python3 pivot.py data/customers.csv data/orders.csv /tmp/pivot.csv && cat /tmp/pivot.csv | cut -c1-80
