import json
import random
import subprocess
import sys
from collections import Counter
from datetime import datetime, timedelta

LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
TRACE = [
    "Traceback (most recent call last):",
    '  File "app.py", line 3, in <module>',
    "    run()",
    "ValueError: bad value 7",
    "",
]

SAMPLE = """starting up (no timestamp yet)
2024-03-01 10:15:02,481 INFO service started
2024-03-01 10:15:03 ERROR request failed
Traceback (most recent call last):
  File "app.py", line 10, in handle
    1 / 0
ZeroDivisionError: division by zero

2024-03-01 11:00:00,000 WARNING slow: 2.5 s
   continued detail
2024-03-01 11:59:59 DEBUG tick
"""


def generate(seed):
    r = random.Random(seed)
    t = datetime(2024, 5, 1, 8, 0, 0)
    lines, records = [], []
    for _ in range(400):
        t += timedelta(seconds=r.randint(1, 200))
        level = r.choice(LEVELS)
        stamp = t.strftime("%Y-%m-%d %H:%M:%S") + (f",{r.randint(0, 999):03d}" if r.random() < 0.5 else "")
        lines.append(f"{stamp} {level} event {r.randint(1, 99)}")
        records.append((t.strftime("%Y-%m-%d %H"), level))
        if r.random() < 0.15:
            lines.extend(TRACE)
    return "\n".join(lines) + "\n", records


def run(*args):
    out = subprocess.run(
        [sys.executable, "-m", "logstat", *args], cwd="/workspace", capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def expected(records, min_level="DEBUG"):
    keep = [(h, lv) for h, lv in records if LEVELS.index(lv) >= LEVELS.index(min_level)]
    return {"levels": dict(sorted(Counter(lv for _, lv in keep).items())),
            "hours": dict(sorted(Counter(h for h, _ in keep).items())), "records": len(keep)}  # fmt: skip


def test_parse_joins_continuation_lines():
    from logstat.parser import parse

    records = list(parse(SAMPLE.splitlines(keepends=True)))
    assert [(r.level, r.timestamp) for r in records] == [
        ("INFO", datetime(2024, 3, 1, 10, 15, 2, 481000)),
        ("ERROR", datetime(2024, 3, 1, 10, 15, 3)),
        ("WARNING", datetime(2024, 3, 1, 11, 0, 0)),
        ("DEBUG", datetime(2024, 3, 1, 11, 59, 59)),
    ]
    assert records[1].message == (
        'request failed\nTraceback (most recent call last):\n  File "app.py", line 10, in handle\n'
        "    1 / 0\nZeroDivisionError: division by zero"
    )
    assert records[2].message == "slow: 2.5 s\n   continued detail"


def test_cli_counts_generated_logs(tmp_path):
    text_a, rec_a = generate(1)
    text_b, rec_b = generate(2)
    (tmp_path / "a.log").write_text(text_a)
    (tmp_path / "b.log").write_text(text_b)
    assert run(str(tmp_path / "a.log"), str(tmp_path / "b.log")) == expected(rec_a + rec_b)


def test_cli_level_filter(tmp_path):
    text, records = generate(3)
    (tmp_path / "c.log").write_text(text)
    assert run(str(tmp_path / "c.log"), "--level", "WARNING") == expected(records, "WARNING")


def test_the_sample(tmp_path):
    (tmp_path / "s.log").write_text(SAMPLE)
    assert run(str(tmp_path / "s.log")) == {
        "levels": {"DEBUG": 1, "ERROR": 1, "INFO": 1, "WARNING": 1},
        "hours": {"2024-03-01 10": 2, "2024-03-01 11": 2},
        "records": 4,
    }
