"""Log records from lines."""

import re
from dataclasses import dataclass
from datetime import datetime

LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) (DEBUG|INFO|WARNING|ERROR|CRITICAL) (.*)$")


@dataclass(frozen=True)
class Record:
    timestamp: datetime
    level: str
    message: str


def parse(lines):
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            continue
        m = LINE.match(line)
        if m is None and not line[:1].isdigit():
            m = LINE.match(line.strip())
        if line[:1].isdigit() and m is None:
            continue
        yield Record(datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S"), m.group(2), m.group(3))
