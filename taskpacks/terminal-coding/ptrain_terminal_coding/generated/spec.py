"""The vocabulary every family draws from, the Spec an instance is before it becomes a Task, and the
helpers that write its hidden test's checks.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

CATEGORY = "shell-basics"
PER_FAMILY = 80
MAX_SOLUTION_CHARS = 120
W = "/workspace"

_WORDS = """
apple river stone cloud garden window yellow purple orange silver coffee bread honey lemon mango
tiger horse eagle whale otter rabbit monkey spider turtle camel pencil paper table chair lamp
clock mirror bottle basket pillow rocket planet comet meadow forest desert island valley canyon
bridge castle tower market school office doctor farmer pilot sailor driver singer winter summer
autumn spring monday friday morning evening thunder breeze shadow candle violin guitar piano drum
flute cookie butter cheese pepper ginger garlic tomato potato carrot cherry banana melon kiwi
quick lazy happy brave quiet bright gentle proud clever fancy jolly noble rapid sunny windy
"""
# No word is a part of another, so "lines containing X" means the same to grep, grep -w and Python.
WORDS = tuple(w for w in _WORDS.split() if not any(w != o and w in o for o in _WORDS.split()))
NAMES = ("Ana", "Ben", "Chen", "Dara", "Eva", "Farid", "Gita", "Hugo", "Ines", "Jon", "Kai", "Lena", "Mona", "Nils")
CITIES = ("Oslo", "Lima", "Paris", "Rome", "Tokyo", "Cairo", "Quito", "Dakar", "Hanoi", "Bern", "Riga", "Perth")
COLORS = ("red", "blue", "green", "black", "white", "pink", "gray", "teal")
STEMS = (
    "notes",
    "data",
    "items",
    "words",
    "names",
    "fruits",
    "todo",
    "input",
    "records",
    "lines",
    "entries",
    "animals",
    "colors",
    "list",
    "journal",
    "poem",
    "story",
    "memo",
    "draft",
    "log",
    "inventory",
    "report",
)
OUTS = ("out", "result", "answer", "output", "summary", "final", "done", "report_out", "new", "clean")
DIRS = ("docs", "src", "app", "build", "logs", "data", "backup", "archive", "tmp", "assets", "project", "notes")
EXTS = ("txt", "log", "csv", "md", "py", "json", "tmp", "bak")
DELIMITERS = {",": "commas", ";": "semicolons", ":": "colons", "|": "pipe characters (|)", "\t": "tabs"}


@dataclass
class Spec:
    """One instance, before it becomes a Task."""

    instruction: str
    solution: str
    checks: list[str]  # assert statements of the hidden test
    paths: tuple[str, ...]  # the absolute paths the instruction names
    files: dict[str, str] = field(default_factory=dict)  # the workspace, relative paths
    difficulty: str = "easy"


# ---- helpers: names, text, checks ------------------------------------------------------------


def ordinal(n: int) -> str:
    suffix = "th" if n % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def names(rng: random.Random, k: int, pool: tuple[str, ...] = STEMS) -> list[str]:
    return rng.sample(pool, k)


def src_out(rng: random.Random, ext: str = "txt") -> tuple[str, str, str]:
    """(relative input name, absolute input path, absolute output path)."""
    stem = rng.choice(STEMS)
    out = rng.choice([o for o in OUTS if o != stem])
    return f"{stem}.{ext}", f"{W}/{stem}.{ext}", f"{W}/{out}.txt"


def sentence(rng: random.Random, lo: int = 2, hi: int = 6, avoid: tuple[str, ...] = ()) -> str:
    return " ".join(rng.sample([w for w in WORDS if w not in avoid], rng.randint(lo, hi)))


def text_of(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


def pick(rng: random.Random, *templates: str, **values: object) -> str:
    return rng.choice(templates).format(**values)


def file_equals(path: str, expected: str) -> list[str]:
    """The file holds exactly `expected` (a trailing newline either way)."""
    return [
        f"assert Path({path!r}).is_file(), {path + ' does not exist'!r}",
        f"assert Path({path!r}).read_text().rstrip('\\n') == {expected.rstrip(chr(10))!r}",
    ]


def lines_equal(path: str, lines: list[str]) -> list[str]:
    return file_equals(path, "\n".join(lines))


def number_equals(path: str, value: int) -> list[str]:
    return [
        f"assert Path({path!r}).is_file(), {path + ' does not exist'!r}",
        f"assert Path({path!r}).read_text().strip() == {str(value)!r}",
    ]


def missing(path: str) -> list[str]:
    return [f"assert not Path({path!r}).exists(), {path + ' should be gone'!r}"]


def test_source(checks: list[str]) -> str:
    body = "".join(f"    {check}\n" for check in checks)
    return f"from pathlib import Path\n\n\ndef test_result():\n{body}"
