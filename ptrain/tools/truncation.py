"""Keep tool output inside the model's context: head and tail kept, the middle cut with a marker.

Long outputs matter most at their start (the command's first errors) and end (the summary line),
so both are kept and the marker says exactly how much was cut, in bytes and lines.
"""

from __future__ import annotations

MAX_BYTES = 10_000
MAX_LINES = 256


def truncate_middle(text: str, max_bytes: int = MAX_BYTES, max_lines: int = MAX_LINES) -> str:
    """`text` if it fits both limits, else its head and tail around a marker saying what was cut."""
    data = text.encode()
    lines = text.splitlines(keepends=True)
    if len(data) <= max_bytes and len(lines) <= max_lines:
        return text
    if len(lines) > max_lines:  # first keep whole lines from both ends...
        head_lines = max_lines // 2
        head = "".join(lines[:head_lines]).encode()
        tail = "".join(lines[len(lines) - (max_lines - head_lines) :]).encode()
    else:
        head, tail = data, data
    head = head[: max_bytes // 2]  # ...then hold each end to its share of the bytes
    tail_budget = max_bytes - len(head)
    tail = tail[len(tail) - tail_budget :] if len(tail) > tail_budget else tail
    head_text, tail_text = head.decode(errors="ignore"), tail.decode(errors="ignore")
    cut_bytes = len(data) - len(head_text.encode()) - len(tail_text.encode())
    cut_lines = text.count("\n") - head_text.count("\n") - tail_text.count("\n")
    return f"{head_text}\n[... {cut_bytes} bytes and {cut_lines} lines cut ...]\n{tail_text}"
