import random
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

SCHEMA_V1 = """
CREATE TABLE members (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, email TEXT, joined TEXT NOT NULL);
CREATE TABLE loans (id INTEGER PRIMARY KEY, member_id INTEGER NOT NULL, book_title TEXT NOT NULL, book_author TEXT NOT NULL,
                    loaned TEXT NOT NULL, returned TEXT);
"""


def make_v1(path, seed, n_members=60, n_loans=300):
    r = random.Random(seed)
    first = ["Ada", "Grace", "Alan", "Linus", "Barbara", "Ken", "Margaret", "Dennis", "Frances", "Edsger"]
    last = [
        "Lovelace",
        "Hopper",
        "Turing",
        "Torvalds",
        "Liskov",
        "Thompson",
        "Hamilton",
        "Ritchie",
        "Allen",
        "van Dijkstra",
    ]
    books = [
        ("Dune", "Frank Herbert"),
        ("Emma", "Jane Austen"),
        ("Ulysses", "James Joyce"),
        ("Beloved", "Toni Morrison"),
        ("Dune", "Brian Herbert"),
        ("Solaris", "Stanislaw Lem"),
        ("Kindred", "Octavia Butler"),
        ("Walden", "Henry Thoreau"),
    ]
    con = sqlite3.connect(path)
    con.executescript(open("/workspace/db/schema_v1.sql").read() if path == "/workspace/db/library.db" else SCHEMA_V1)
    for i in range(1, n_members + 1):
        name = r.choice(first) if r.random() < 0.1 else f"{r.choice(first)} {r.choice(last)}"
        email = r.choice([None, "", f"  {name.split()[0]}.{i}@Example.ORG ", f"{name.split()[0].lower()}{i}@mail.test"])
        con.execute(
            "INSERT INTO members VALUES (?, ?, ?, ?)",
            (i, name, email, f"{r.randint(1, 28):02d}/{r.randint(1, 12):02d}/{r.randint(2015, 2023)}"),
        )
    for i in range(1, n_loans + 1):
        title, author = r.choice(books)
        day = (r.randint(1, 28), r.randint(1, 12), r.randint(2020, 2024))
        returned = None if r.random() < 0.3 else f"{min(day[0] + r.randint(0, 3), 28):02d}/{day[1]:02d}/{day[2]}"
        con.execute(
            "INSERT INTO loans VALUES (?, ?, ?, ?, ?, ?)",
            (i, r.randint(1, n_members), title, author, f"{day[0]:02d}/{day[1]:02d}/{day[2]}", returned),
        )
    con.commit()
    con.close()


def iso(d):
    return None if d is None else f"{d[6:10]}-{d[3:5]}-{d[0:2]}"


def expected(path):
    con = sqlite3.connect(path)
    members = []
    for i, name, email, joined in con.execute("SELECT id, full_name, email, joined FROM members ORDER BY id"):
        first, _, last = name.partition(" ")
        email = (email or "").strip().lower() or None
        members.append((i, first, last, email, iso(joined)))
    pairs = sorted(set(con.execute("SELECT book_title, book_author FROM loans")))
    books = [(n, t, a) for n, (t, a) in enumerate(pairs, start=1)]
    ids = {(t, a): n for n, t, a in books}
    loans = [(i, m, ids[(t, a)], iso(lo), iso(re)) for i, m, t, a, lo, re in
             con.execute("SELECT id, member_id, book_title, book_author, loaned, returned FROM loans ORDER BY id")]  # fmt: skip
    con.close()
    return members, books, loans


def migrate(path):
    script = Path("/workspace/db/migrate.sql")
    assert script.is_file(), "no /workspace/db/migrate.sql"
    with open(script, "rb") as f:
        return subprocess.run(["sqlite3", str(path)], stdin=f, capture_output=True, text=True, timeout=60)


def check(path):
    want = expected(path)
    out = migrate(path)
    assert out.returncode == 0, out.stderr
    con = sqlite3.connect(path)
    tables = sorted(
        r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    )
    assert tables == ["books", "loans", "members"]
    assert con.execute("PRAGMA user_version").fetchone()[0] == 2
    cols = {t: [(r[1], r[2].upper(), r[3]) for r in con.execute(f"PRAGMA table_info({t})")] for t in tables}
    assert cols["members"] == [
        ("id", "INTEGER", 0),
        ("first_name", "TEXT", 1),
        ("last_name", "TEXT", 1),
        ("email", "TEXT", 0),
        ("joined", "DATE", 1),
    ]
    assert cols["books"] == [("id", "INTEGER", 0), ("title", "TEXT", 1), ("author", "TEXT", 1)]
    assert cols["loans"] == [
        ("id", "INTEGER", 0),
        ("member_id", "INTEGER", 1),
        ("book_id", "INTEGER", 1),
        ("loaned", "DATE", 1),
        ("returned", "DATE", 0),
    ]
    fks = sorted((r[2], r[3], r[4]) for r in con.execute("PRAGMA foreign_key_list(loans)"))
    assert fks == [("books", "book_id", "id"), ("members", "member_id", "id")]
    assert [r[1] for r in con.execute("PRAGMA index_list(loans)") if r[1] == "loans_member"] == ["loans_member"]
    assert [r[2] for r in con.execute("PRAGMA index_info(loans_member)")] == ["member_id"]
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []
    members, books, loans = want
    assert con.execute("SELECT id, first_name, last_name, email, joined FROM members ORDER BY id").fetchall() == members
    assert con.execute("SELECT id, title, author FROM books ORDER BY id").fetchall() == books
    assert con.execute("SELECT id, member_id, book_id, loaned, returned FROM loans ORDER BY id").fetchall() == loans
    with pytest.raises(sqlite3.IntegrityError):
        con.execute("INSERT INTO books (title, author) VALUES (?, ?)", books[0][1:])
    con.close()


def test_sample_database(tmp_path):
    path = tmp_path / "library.db"
    shutil.copy("/workspace/db/library.db", path)
    check(path)


@pytest.mark.parametrize("seed", [7, 8, 9])
def test_other_databases(tmp_path, seed):
    path = str(tmp_path / f"lib{seed}.db")
    make_v1(path, seed, n_members=20 + seed * 5, n_loans=50 * seed)
    check(path)


def test_a_failing_migration_changes_nothing(tmp_path):
    path = str(tmp_path / "bad.db")
    make_v1(path, 3, n_members=10, n_loans=40)
    con = sqlite3.connect(path)
    con.execute("INSERT INTO members VALUES (99, 'Twin One', 'same@x.org', '01/01/2020')")
    con.execute(
        "INSERT INTO members VALUES (100, 'Twin Two', ' SAME@x.org', '01/01/2020')"
    )  # violates UNIQUE(email) in v2
    con.commit()
    before = (
        con.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall(),
        con.execute("SELECT * FROM members ORDER BY id").fetchall(),
    )
    con.close()
    migrate(path)
    con = sqlite3.connect(path)
    after = (
        con.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall(),
        con.execute("SELECT * FROM members ORDER BY id").fetchall(),
    )
    assert after == before
    assert con.execute("PRAGMA user_version").fetchone()[0] == 0
