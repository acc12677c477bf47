"""GitHub-style heading anchors."""

import re


def slugify(title):
    text = re.sub(r"[^\w\- ]", "", title.lower())
    return text.replace(" ", "-")
