import random
import sqlite3
from pathlib import Path

import pytest

SCHEMA = """
CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, opening_cents INTEGER NOT NULL, opened_on TEXT NOT NULL);
CREATE TABLE transactions (id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL REFERENCES accounts(id),
                           posted_on TEXT NOT NULL, amount_cents INTEGER NOT NULL, memo TEXT);
"""


def make_db(path, seed, n_accounts=6, n_tx=400):
    r = random.Random(seed)
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    for a in range(1, n_accounts + 1):
        con.execute(
            "INSERT INTO accounts VALUES (?, ?, ?, ?)",
            (a, f"acct-{r.randint(100, 999)}-{a}", r.randint(-5000, 50000), "2023-01-01"),
        )
    for t in range(1, n_tx + 1):
        day = f"{r.choice([2023, 2024, 2024, 2025])}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"
        con.execute(
            "INSERT INTO transactions VALUES (?, ?, ?, ?, ?)",
            (t, r.randint(1, n_accounts), day, r.randint(-20000, 15000), "m"),
        )
    con.commit()
    return con


def reference(con):
    accounts = {i: (name, opening) for i, name, opening in con.execute("SELECT id, name, opening_cents FROM accounts")}
    txs = sorted(con.execute("SELECT account_id, posted_on, id, amount_cents FROM transactions"))
    balance = {a: accounts[a][1] for a in accounts}
    rows = []
    for a, day, tid, amount in txs:
        balance[a] += amount
        if "2024-01-01" <= day <= "2024-12-31":
            rows.append([accounts[a][0], day, amount, balance[a], int(balance[a] < 0), tid, a])
    out = []
    for name, day, amount, bal, over, tid, a in rows:
        same = sorted({r[2] for r in rows if r[6] == a and r[1][:7] == day[:7]}, reverse=True)
        out.append(((name, day, tid), (name, day, amount, bal, over, same.index(amount) + 1)))
    return [row for _, row in sorted(out)]


def run(con):
    sql = Path("/workspace/statement.sql").read_text()
    assert sql.strip(), "statement.sql is empty"
    return [tuple(r) for r in con.execute(sql).fetchall()]


def test_sample_database():
    import sqlite3

    con = sqlite3.connect("file:/workspace/bank.db?mode=ro", uri=True)
    want = reference(con)
    assert want and run(con) == want


@pytest.mark.parametrize("seed, accounts, txs", [(1, 3, 200), (2, 8, 600), (3, 1, 50), (4, 12, 900)])
def test_other_databases(seed, accounts, txs):
    con = make_db(":memory:", seed, accounts, txs)
    assert run(con) == reference(con)


def test_ties_and_same_day_order():
    con = make_db(":memory:", 5, 1, 0)
    con.execute("UPDATE accounts SET opening_cents = 100")
    rows = [
        (1, "2024-03-05", -50),
        (2, "2024-03-05", -100),
        (3, "2024-03-01", -50),
        (4, "2023-12-31", 10),
        (5, "2024-04-01", 7),
    ]
    con.executemany("INSERT INTO transactions VALUES (?, 1, ?, ?, 'm')", rows)
    name = con.execute("SELECT name FROM accounts").fetchone()[0]
    assert run(con) == [
        (name, "2024-03-01", -50, 60, 0, 1),
        (name, "2024-03-05", -50, 10, 0, 1),
        (name, "2024-03-05", -100, -90, 1, 2),
        (name, "2024-04-01", 7, -83, 1, 1),
    ]
