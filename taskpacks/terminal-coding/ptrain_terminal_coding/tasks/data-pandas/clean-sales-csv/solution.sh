cat > /workspace/clean_sales.py <<'PY'
"""Clean a point-of-sale export: python3 clean_sales.py INPUT.csv OUTPUT.csv"""

import json
import sys
from decimal import Decimal

import pandas as pd


def parse_date(text):
    for fmt in ("%Y-%m-%d", "%m/%d/%Y", "%d %b %Y"):
        try:
            return pd.to_datetime(text, format=fmt).strftime("%Y-%m-%d")
        except ValueError:
            pass
    raise ValueError(f"unknown date {text!r}")


def parse_amount(text):
    neg = text.startswith("(") and text.endswith(")")
    value = Decimal(text.strip("()").replace("$", "").replace(",", ""))
    return -value if neg else value


def main(src, dst):
    df = pd.read_csv(src, dtype=str, keep_default_na=False)
    before = len(df)
    df = df.drop_duplicates(keep="first")
    dups = before - len(df)
    df["date"] = df["date"].map(parse_date)
    df["customer"] = df["customer"].map(lambda s: " ".join(s.split()).title())
    df["region"] = df["region"].str.strip().str.lower().replace({"": "unknown", "n/a": "unknown"})
    amounts = df["amount"].map(parse_amount)
    df["amount"] = amounts.map(lambda v: f"{v:.2f}")
    df["_amount"] = amounts
    df = df.sort_values(["date", "txn"], kind="stable")
    df[["txn", "date", "customer", "region", "amount"]].to_csv(dst, index=False)
    by_region = {k: f"{sum(g, Decimal(0)):.2f}" for k, g in sorted(df.groupby("region")["_amount"])}
    summary = {"rows": len(df), "duplicates_dropped": int(dups), "total": f"{sum(df['_amount'], Decimal(0)):.2f}", "by_region": by_region}
    with open(dst + ".summary.json", "w") as f:
        json.dump(summary, f, indent=2)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
PY
cd /workspace && python3 clean_sales.py raw/sales.csv /tmp/clean.csv && head -3 /tmp/clean.csv
