cat > /workspace/restock.py <<'PY'
"""What to reorder: python3 restock.py STOCK.csv SALES.csv OUT.csv"""

import sys

import numpy as np
import pandas as pd


def main(stock_path, sales_path, out_path):
    stock = pd.read_csv(stock_path, dtype={"sku": str, "warehouse": str})
    sales = pd.read_csv(sales_path, dtype={"sku": str, "warehouse": str})
    sold = sales.groupby(["sku", "warehouse"], as_index=False)["units"].sum()
    df = stock.merge(sold, on=["sku", "warehouse"], how="left", validate="one_to_one")
    df["units"] = df["units"].fillna(0)
    df["velocity_raw"] = df["units"] / 28
    df = df[df["velocity_raw"] > 0].copy()
    df["cover_raw"] = df["on_hand"] / df["velocity_raw"]
    df = df[df["cover_raw"] < df["lead_time_days"] + 7].copy()
    df["suggested_units"] = np.ceil(df["velocity_raw"] * (df["lead_time_days"] + 28) - df["on_hand"]).astype(int)
    df["velocity"] = df["velocity_raw"].round(3)
    df["days_of_cover"] = df["cover_raw"].round(1)
    df = df.sort_values(["cover_raw", "sku", "warehouse"])
    df[["sku", "warehouse", "on_hand", "velocity", "days_of_cover", "suggested_units"]].to_csv(out_path, index=False)


if __name__ == "__main__":
    main(*sys.argv[1:4])
PY
cd /workspace && python3 restock.py data/stock.csv data/sales.csv /tmp/restock.csv && head -3 /tmp/restock.csv
