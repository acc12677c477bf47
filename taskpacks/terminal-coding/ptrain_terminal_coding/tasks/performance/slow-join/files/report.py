"""Revenue per country.

Usage: python3 report.py CUSTOMERS.csv ORDERS.csv

CUSTOMERS.csv has columns id,name,country; ORDERS.csv has columns id,customer_id,amount (whole
euros). Prints one line `COUNTRY TOTAL ORDERS` per country that has at least one order, where
TOTAL is the sum of the amounts of its customers' orders and ORDERS is how many orders they
placed, sorted by TOTAL descending, then COUNTRY ascending. Orders whose customer_id is not in
CUSTOMERS.csv are skipped; the last line is `UNKNOWN N` with the number of skipped orders.
"""

import csv
import sys


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main(customers_path, orders_path):
    customers = read_rows(customers_path)
    orders = read_rows(orders_path)

    matched = []
    unknown = 0
    for order in orders:
        country = None
        for customer in customers:
            if customer["id"] == order["customer_id"]:
                country = customer["country"]
        if country is None:
            unknown += 1
        else:
            matched.append((country, int(order["amount"])))

    countries = []
    for country, _ in matched:
        if country not in countries:
            countries.append(country)

    rows = []
    for country in countries:
        total = sum([amount for c, amount in matched if c == country])
        count = len([amount for c, amount in matched if c == country])
        rows.append((country, total, count))

    rows.sort(key=lambda row: (-row[1], row[0]))
    for country, total, count in rows:
        print(f"{country} {total} {count}")
    print(f"UNKNOWN {unknown}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
