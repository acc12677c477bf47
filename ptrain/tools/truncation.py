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
    head_lines, tail_lines = lines[: max_lines // 2], lines[len(lines) - (max_lines - max_lines // 2) :]
    if len(lines) <= max_lines:
        head_lines, tail_lines = lines, []
    head = "".join(head_lines).encode()[: max_bytes // 2]
    tail_budget = max_bytes - len(head)
    tail = "".join(tail_lines).encode()
    tail = tail[len(tail) - tail_budget :] if len(tail) > tail_budget else tail
    if not tail_lines:  # few but long lines: cut by bytes alone
        head, tail = data[: max_bytes // 2], data[len(data) - (max_bytes - max_bytes // 2) :]
    head_text = head.decode(errors="ignore")
    tail_text = tail.decode(errors="ignore")
    cut_bytes = len(data) - len(head_text.encode()) - len(tail_text.encode())
    cut_lines = max(0, len(lines) - head_text.count("\n") - tail_text.count("\n"))
    marker = f"\n[... {cut_bytes} bytes and {cut_lines} lines cut ...]\n"
    return head_text + marker + tail_text
