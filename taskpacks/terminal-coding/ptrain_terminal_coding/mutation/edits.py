"""A mutation as text: an `Edit` replaces one segment of a file, found through `Source` from AST positions.

Editing the text rather than unparsing a changed tree keeps the rest of the file's formatting, so a
diff of a mutant shows one small change. AST positions count UTF-8 bytes, so sources must be ASCII.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Edit:
    start: int  # offsets into the file's text (projects are ASCII, so bytes and characters agree)
    end: int
    new: str


def apply_edit(text: str, edit: Edit) -> str:
    return text[: edit.start] + edit.new + text[edit.end :]


class Source:
    """A file's text with offsets for AST positions (which count UTF-8 bytes, hence ASCII only)."""

    def __init__(self, text: str):
        if not text.isascii():
            raise ValueError("mutation needs ASCII sources: AST columns count bytes")
        self.text = text
        self.line_starts = [0]
        for line in text.splitlines(keepends=True):
            self.line_starts.append(self.line_starts[-1] + len(line))

    def start(self, node: ast.AST) -> int:
        return self.line_starts[node.lineno - 1] + node.col_offset

    def end(self, node: ast.AST) -> int:
        return self.line_starts[node.end_lineno - 1] + node.end_col_offset

    def segment(self, node: ast.AST) -> str:
        return self.text[self.start(node) : self.end(node)]

    def token(self, lo: int, hi: int, pattern: str) -> tuple[int, int] | None:
        """Where an operator matching `pattern` sits between two operands, if nothing else does."""
        match = re.fullmatch(rf"[\s()\\]*({pattern})[\s()\\]*", self.text[lo:hi])
        return (lo + match.start(1), lo + match.end(1)) if match else None
