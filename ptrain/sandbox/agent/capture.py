"""Head+tail capture: the first and last bytes of a command's output, however long it runs."""

from __future__ import annotations


def cut_marker(n_cut: int) -> bytes:
    """The text that stands where the middle of a long output was cut."""
    return f"\n[... {n_cut} bytes cut ...]\n".encode()


class HeadTail:
    """Keeps the first and last bytes of a stream of any length in bounded memory."""

    def __init__(self, max_bytes: int):
        self.head_max = max_bytes // 2
        self.tail_max = max_bytes - self.head_max
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_max - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        self.tail += data
        if len(self.tail) > 2 * self.tail_max + 65536:
            del self.tail[: len(self.tail) - self.tail_max]

    @property
    def truncated(self) -> bool:
        return self.total > self.head_max + self.tail_max

    def value(self) -> bytes:
        if not self.truncated:
            return bytes(self.head + self.tail)
        tail = self.tail[len(self.tail) - self.tail_max :] if self.tail_max else b""
        return bytes(self.head) + cut_marker(self.total - len(self.head) - len(tail)) + bytes(tail)
