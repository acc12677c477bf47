cd /workspace && python3 - <<'PY'
import csv, json
with open("inventory.csv", newline="") as f:
    rows = [
        {"sku": r["sku"], "name": r["name"], "quantity": int(r["quantity"]), "price": float(r["price"])}
        for r in csv.DictReader(f)
    ]
with open("inventory.json", "w") as f:
    json.dump(rows, f, indent=2)
PY
