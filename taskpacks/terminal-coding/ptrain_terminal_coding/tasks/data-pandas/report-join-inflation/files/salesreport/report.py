"""The two report tables."""

from pathlib import Path

from salesreport.load import load


def enrich(customers, addresses, orders):
    paid = orders[orders["status"] == "paid"]
    merged = paid.merge(customers, on="customer_id").merge(addresses, on="customer_id")
    return merged


def by_segment(merged):
    out = merged.groupby("segment").agg(orders=("order_id", "count"), revenue=("amount", "sum")).reset_index()
    out["revenue"] = out["revenue"].round(2)
    return out.sort_values("revenue", ascending=False)


def by_city(merged):
    out = merged.groupby(["city", "month"]).agg(revenue=("amount", "sum")).reset_index()
    out["revenue"] = out["revenue"].round(2)
    return out.sort_values(["city", "month"])


def run(data_dir, out_dir):
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    merged = enrich(*load(data_dir))
    by_segment(merged).to_csv(f"{out_dir}/by_segment.csv", index=False)
    by_city(merged).to_csv(f"{out_dir}/by_city.csv", index=False)
