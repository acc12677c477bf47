cd /workspace && cat > logstat/parser.py <<'PY'
"""Log records from lines: a record starts with a timestamp and a level; other lines continue it."""

import re
from dataclasses import dataclass
from datetime import datetime

LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?:,(\d{3}))? (DEBUG|INFO|WARNING|ERROR|CRITICAL) (.*)$")


@dataclass(frozen=True)
class Record:
    timestamp: datetime
    level: str
    message: str


def parse(lines):
    current = None
    for line in lines:
        line = line.rstrip("\r\n")
        m = LINE.match(line)
        if m:
            if current is not None:
                yield finish(current)
            stamp = datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S")
            if m[2]:
                stamp = stamp.replace(microsecond=int(m[2]) * 1000)
            current = [stamp, m[3], [m[4]]]
        elif current is not None:
            current[2].append(line)
    if current is not None:
        yield finish(current)


def finish(current):
    stamp, level, parts = current
    return Record(stamp, level, "\n".join(parts).rstrip("\n").rstrip())
PY
