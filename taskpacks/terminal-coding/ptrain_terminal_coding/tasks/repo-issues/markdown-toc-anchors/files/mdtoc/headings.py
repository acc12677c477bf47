"""ATX headings of a Markdown document."""

import re

HEADING = re.compile(r"^(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")


def parse(text):
    found = []
    for line in text.splitlines():
        m = HEADING.match(line)
        if m:
            found.append((len(m[1]), m[2].strip()))
    return found
