import sqlite3
from pathlib import Path

import pytest

EXPECTED = [
    ("Ada Lovelace", 36, "London"),
    ("Alan Turing", 41, "Wilmslow"),
    ("Grace Hopper", 85, "Arlington"),
    ("Linus Torvalds", 54, "Portland"),
    ("Hamilton, Margaret", 88, "Boston"),
    ("Ken Thompson", 81, "Berkeley"),
    ("Barbara Liskov", 84, "Cambridge"),
]


@pytest.fixture
def db():
    assert Path("/workspace/people.db").is_file()
    con = sqlite3.connect("file:/workspace/people.db?mode=ro", uri=True)
    yield con
    con.close()


def test_people_table_holds_every_row(db):
    rows = db.execute("SELECT name, age, city FROM people").fetchall()
    assert sorted(rows) == sorted(EXPECTED)


def test_ages_are_integers(db):
    assert {t for (t,) in db.execute("SELECT typeof(age) FROM people")} == {"integer"}
    assert db.execute("SELECT SUM(age) FROM people").fetchone()[0] == 469
