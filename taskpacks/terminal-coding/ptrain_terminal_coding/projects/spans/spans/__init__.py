"""Half-open spans [start, end) on a number line: merging, overlap, gaps and free slots."""

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Span:
    start: int
    end: int

    def __post_init__(self):
        if self.end < self.start:
            raise ValueError(f"span ends before it starts: {self.start}..{self.end}")

    @property
    def length(self):
        return self.end - self.start

    def is_empty(self):
        return self.start == self.end

    def contains(self, point):
        return self.start <= point < self.end

    def overlaps(self, other):
        return self.start < other.end and other.start < self.end

    def touches(self, other):
        return self.end == other.start or other.end == self.start

    def intersection(self, other):
        start = max(self.start, other.start)
        end = min(self.end, other.end)
        if start >= end:
            return None
        return Span(start, end)

    def shift(self, delta):
        return Span(self.start + delta, self.end + delta)


def merge(spans):
    """Merge overlapping or touching spans into a sorted list of disjoint ones."""
    result = []
    for span in sorted(spans):
        if span.is_empty():
            continue
        if result and span.start <= result[-1].end:
            last = result[-1]
            result[-1] = Span(last.start, max(last.end, span.end))
        else:
            result.append(span)
    return result


def total_length(spans):
    return sum(span.length for span in merge(spans))


def gaps(spans, start, end):
    """The parts of [start, end) that no span covers."""
    result = []
    cursor = start
    for span in merge(spans):
        if span.end <= cursor:
            continue
        if span.start >= end:
            break
        if span.start > cursor:
            result.append(Span(cursor, span.start))
        cursor = max(cursor, span.end)
    if cursor < end:
        result.append(Span(cursor, end))
    return result


def free_slots(busy, start, end, duration):
    """Gaps of at least `duration` between `start` and `end`, e.g. free meeting slots in a day."""
    return [gap for gap in gaps(busy, start, end) if gap.length >= duration]


def split(span, size):
    """Cut a span into consecutive pieces of `size`; the last piece may be shorter."""
    if size <= 0:
        raise ValueError("size must be positive")
    return [Span(cursor, min(cursor + size, span.end)) for cursor in range(span.start, span.end, size)]


def coverage(spans, point):
    """How many of the spans contain `point`."""
    return sum(1 for span in spans if span.contains(point))


def busiest(spans):
    """The largest number of spans that overlap at any one point."""
    events = []
    for span in spans:
        if not span.is_empty():
            events.append((span.start, 1))
            events.append((span.end, -1))
    best = current = 0
    for _, change in sorted(events):
        current += change
        best = max(best, current)
    return best
