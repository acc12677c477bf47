cd /workspace && python3 - <<'PY'
import csv, json
data = json.load(open("orders.json", encoding="utf-8"))
rows = []
for order in data["orders"]:
    if order["status"] == "cancelled":
        continue
    for item in order["items"]:
        rows.append([order["id"], order["customer"]["name"], item["sku"], item["title"], item["qty"], f"{item['qty'] * item['price']:.2f}"])
rows.sort(key=lambda r: (r[0], r[2]))
with open("order_lines.csv", "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f)
    w.writerow(["order_id", "customer", "sku", "title", "qty", "line_total"])
    w.writerows(rows)
PY
