"""python3 -m inventory STOCK.csv: print the stock report for a CSV of sku,name,unit_price,quantity."""

import csv
import sys

from inventory.models import Item
from inventory.report import report
from inventory.store import Store


def main(argv):
    store = Store()
    with open(argv[1], newline="") as f:
        for row in csv.DictReader(f):
            store.add(Item(row["sku"], row["name"], float(row["unit_price"])), int(row["quantity"]))
    print(report(store))


if __name__ == "__main__":
    main(sys.argv)
