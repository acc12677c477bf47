cd /workspace && cat > mdtoc/headings.py <<'PY'
"""ATX headings of a Markdown document (fenced code blocks skipped)."""

import re

HEADING = re.compile(r"^(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def parse(text):
    found, fence = [], None
    for line in text.splitlines():
        m = FENCE.match(line)
        if m:
            marker = m[1]
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
            continue
        if fence is not None:
            continue
        m = HEADING.match(line)
        if m:
            found.append((len(m[1]), m[2].strip()))
    return found
PY
cat > mdtoc/toc.py <<'PY'
"""The table of contents."""

from mdtoc.headings import parse
from mdtoc.slug import slugify


def build(text):
    headings = parse(text)
    if not headings:
        return ""
    top = min(level for level, _ in headings)
    lines, seen = [], {}
    for level, title in headings:
        anchor = slugify(title)
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        if count:
            anchor = f"{anchor}-{count}"
        lines.append(f"{'  ' * (level - top)}- [{title}](#{anchor})")
    return "\n".join(lines) + "\n"
PY
