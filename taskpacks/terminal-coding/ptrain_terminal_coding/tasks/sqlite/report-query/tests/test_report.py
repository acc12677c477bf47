import random
import sqlite3
from pathlib import Path

import pytest

REFERENCE = """
SELECT p.category, COUNT(DISTINCT o.customer_id) AS customers, SUM(i.quantity * i.unit_price) AS revenue
FROM order_items i
JOIN orders o ON o.id = i.order_id
JOIN products p ON p.id = i.product_id
WHERE o.status = 'paid' AND o.placed_on >= '2024-01-01' AND o.placed_on < '2025-01-01'
GROUP BY p.category
HAVING COUNT(DISTINCT o.customer_id) >= 3
ORDER BY revenue DESC, p.category
"""

SCHEMA = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), placed_on TEXT NOT NULL, status TEXT NOT NULL);
CREATE TABLE order_items (order_id INTEGER NOT NULL REFERENCES orders(id), product_id INTEGER NOT NULL REFERENCES products(id), quantity INTEGER NOT NULL, unit_price INTEGER NOT NULL);
"""


def make_db(seed, n_customers, n_products, n_orders):
    r = random.Random(seed)
    con = sqlite3.connect(":memory:")
    con.executescript(SCHEMA)
    cats = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    con.executemany("INSERT INTO customers VALUES (?, ?)", [(i, f"c{i}") for i in range(1, n_customers + 1)])
    con.executemany("INSERT INTO products VALUES (?, ?, ?)", [(i, f"p{i}", r.choice(cats)) for i in range(1, n_products + 1)])
    item_orders = []
    for o in range(1, n_orders + 1):
        date = f"{r.choice([2023, 2024, 2024, 2025])}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"
        if r.random() < 0.05:
            date = r.choice(["2024-01-01", "2024-12-31", "2023-12-31", "2025-01-01"])
        con.execute("INSERT INTO orders VALUES (?, ?, ?, ?)", (o, r.randint(1, n_customers), date, r.choice(["paid"] * 5 + ["cancelled", "refunded"])))
        for _ in range(r.randint(1, 3)):
            item_orders.append((o, r.randint(1, n_products), r.randint(1, 4), r.randint(50, 5000)))
    con.executemany("INSERT INTO order_items VALUES (?, ?, ?, ?)", item_orders)
    return con


def report_sql():
    sql = Path("/workspace/report.sql").read_text()
    assert sql.strip(), "report.sql is empty"
    return sql


def run_both(con):
    got = [tuple(row) for row in con.execute(report_sql()).fetchall()]
    want = [tuple(row) for row in con.execute(REFERENCE).fetchall()]
    return got, want


def test_sample_database():
    con = sqlite3.connect("file:/workspace/shop.db?mode=ro", uri=True)
    got, want = run_both(con)
    assert want and got == want


@pytest.mark.parametrize("seed, customers, products, orders", [(1, 40, 30, 300), (2, 8, 20, 25), (3, 15, 50, 120), (4, 60, 8, 500)])
def test_other_databases(seed, customers, products, orders):
    con = make_db(seed, customers, products, orders)
    got, want = run_both(con)
    assert got == want


def test_ties_and_threshold():
    con = sqlite3.connect(":memory:")
    con.executescript(SCHEMA)
    con.executemany("INSERT INTO customers VALUES (?, ?)", [(i, f"c{i}") for i in range(1, 5)])
    con.executemany("INSERT INTO products VALUES (?, ?, ?)", [(1, "a", "zulu"), (2, "b", "yankee"), (3, "c", "xray")])
    rows = []
    for o, cust in enumerate([1, 2, 3, 1, 2, 3, 1, 1, 2], start=1):
        con.execute("INSERT INTO orders VALUES (?, ?, '2024-05-05', 'paid')", (o, cust))
    rows += [(1, 1, 1, 100), (2, 1, 1, 100), (3, 1, 1, 100)]  # zulu: 3 customers, 300
    rows += [(4, 2, 3, 50), (5, 2, 1, 50), (6, 2, 1, 100)]  # yankee: 3 customers, 300
    rows += [(7, 3, 10, 1000), (8, 3, 1, 1000), (9, 3, 1, 1000)]  # xray: 2 customers only
    con.executemany("INSERT INTO order_items VALUES (?, ?, ?, ?)", rows)
    got = [tuple(row) for row in con.execute(report_sql()).fetchall()]
    assert got == [("yankee", 3, 300), ("zulu", 3, 300)]
