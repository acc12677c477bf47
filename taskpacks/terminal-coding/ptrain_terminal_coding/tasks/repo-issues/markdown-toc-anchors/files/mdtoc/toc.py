"""The table of contents."""

from mdtoc.headings import parse
from mdtoc.slug import slugify


def build(text):
    headings = parse(text)
    if not headings:
        return ""
    top = min(level for level, _ in headings)
    lines = []
    for level, title in headings:
        lines.append(f"{'  ' * (level - top)}- [{title}](#{slugify(title)})")
    return "\n".join(lines) + "\n"
