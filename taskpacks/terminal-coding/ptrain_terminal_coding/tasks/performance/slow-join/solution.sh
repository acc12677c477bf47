cd /workspace && python3 - <<'PY'
from pathlib import Path
p = Path("report.py")
src = p.read_text()
start = src.index("def main(customers_path, orders_path):")
end = src.index('if __name__ == "__main__":')
fast = '''def main(customers_path, orders_path):
    country_of = {row["id"]: row["country"] for row in read_rows(customers_path)}
    totals, counts, unknown = {}, {}, 0
    for order in read_rows(orders_path):
        country = country_of.get(order["customer_id"])
        if country is None:
            unknown += 1
            continue
        totals[country] = totals.get(country, 0) + int(order["amount"])
        counts[country] = counts.get(country, 0) + 1

    for country in sorted(totals, key=lambda c: (-totals[c], c)):
        print(f"{country} {totals[country]} {counts[country]}")
    print(f"UNKNOWN {unknown}")


'''
p.write_text(src[:start] + fast + src[end:])
PY
