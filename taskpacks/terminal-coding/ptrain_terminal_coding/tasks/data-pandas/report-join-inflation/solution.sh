cd /workspace && cat > salesreport/report.py <<'PY'
"""The two report tables."""

from pathlib import Path

from salesreport.load import load


def enrich(customers, addresses, orders):
    """Paid orders, one row each, with the customer's segment and primary city."""
    paid = orders[orders["status"] == "paid"]
    primary = addresses[addresses["is_primary"] == 1].drop_duplicates("customer_id")[["customer_id", "city"]]
    merged = paid.merge(customers[["customer_id", "segment"]], on="customer_id", how="left", validate="many_to_one")
    merged = merged.merge(primary, on="customer_id", how="left", validate="many_to_one")
    merged["segment"] = merged["segment"].fillna("unassigned")
    merged["city"] = merged["city"].fillna("unknown")
    assert len(merged) == len(paid)
    return merged


def by_segment(merged):
    out = merged.groupby("segment").agg(orders=("order_id", "count"), revenue=("amount", "sum")).reset_index()
    out["revenue"] = out["revenue"].round(2)
    return out.sort_values(["revenue", "segment"], ascending=[False, True])


def by_city(merged):
    out = merged.groupby(["city", "month"]).agg(revenue=("amount", "sum")).reset_index()
    out["revenue"] = out["revenue"].round(2)
    return out.sort_values(["city", "month"])


def run(data_dir, out_dir):
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    merged = enrich(*load(data_dir))
    by_segment(merged).to_csv(f"{out_dir}/by_segment.csv", index=False)
    by_city(merged).to_csv(f"{out_dir}/by_city.csv", index=False)
PY
python3 -m salesreport data /tmp/out && head -3 /tmp/out/by_segment.csv
