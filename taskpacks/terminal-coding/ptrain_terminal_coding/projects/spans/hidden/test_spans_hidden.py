"""Hidden tests of spans: fresh inputs beyond the visible tests, every result checked type by type.

The package is compared with a reference copy of its original code on seeded random inputs. Values
are compared as plain builtins (`canon`), so an object that only claims equality fails, and so does
code that special-cases the visible tests' inputs.
"""

import copy
import dataclasses
import random
from dataclasses import dataclass

import spans as pkg

PLAIN = (int, str, bool, type(None))
STATEFUL = ()  # objects compared by their attributes


def canon(value):
    kind = type(value)
    if kind is float:
        return ("float", float(f"{value:.12g}"))
    if kind in PLAIN:
        return (kind.__name__, value)
    if kind in (list, tuple):
        return (kind.__name__, [canon(v) for v in value])
    if kind is dict:
        return ("dict", sorted(((canon(k), canon(v)) for k, v in value.items()), key=repr))
    if kind.__name__ in STATEFUL:
        return (kind.__name__, canon(vars(value)))
    if dataclasses.is_dataclass(kind):
        return (kind.__name__, [canon(getattr(value, f.name)) for f in dataclasses.fields(value)])
    raise AssertionError(f"a value of unexpected type {kind.__qualname__}")


def outcome(fn, *args, **kwargs):
    args, kwargs = copy.deepcopy(args), copy.deepcopy(kwargs)
    try:
        result = ("ok", canon(fn(*args, **kwargs)))
    except AssertionError:
        raise
    except Exception as e:
        result = ("raises", type(e).__name__, str(e))
    return result, canon(args), canon(kwargs)


# The reference: the package's original code.


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


# Inputs and checks.


def pair(start, end):
    return outcome(pkg.Span, start, end), outcome(Span, start, end)


def random_span(rng, lo=0, hi=30):
    start = rng.randint(lo, hi)
    return start, start + rng.choice([0, 1, 2, 3, 5, 8, 13])


def spans_of(points):
    return [pkg.Span(*p) for p in points], [Span(*p) for p in points]


def test_random_spans_compare_like_the_reference():
    rng = random.Random(2251)
    for _ in range(600):
        a, b = random_span(rng, -5, 20), random_span(rng, -5, 20)
        assert outcome(pkg.Span, *a)[0] == outcome(Span, *a)[0]
        assert outcome(pkg.Span, a[1], a[0])[0] == outcome(Span, a[1], a[0])[0], a
        (x, y), (p, q) = spans_of([a, b])
        for method in ("overlaps", "touches", "intersection"):
            assert outcome(getattr(x, method), y) == outcome(getattr(p, method), q), (method, a, b)
        for point in range(a[0] - 2, a[1] + 3):
            assert outcome(x.contains, point) == outcome(p.contains, point), (a, point)
        delta = rng.randint(-9, 9)
        assert outcome(x.shift, delta) == outcome(p.shift, delta), (a, delta)
        assert canon(x.length) == canon(p.length) and canon(x.is_empty()) == canon(p.is_empty())
        assert canon(x < y) == canon(p < q) and canon(x == y) == canon(p == q), (a, b)


def test_random_span_sets_merge_like_the_reference():
    rng = random.Random(2252)
    for _ in range(400):
        points = [random_span(rng) for _ in range(rng.randint(0, 7))]
        mine, theirs = spans_of(points)
        start = rng.randint(-3, 25)
        end = start + rng.randint(0, 20)
        assert outcome(pkg.merge, mine) == outcome(merge, theirs), points
        assert outcome(pkg.total_length, mine) == outcome(total_length, theirs), points
        assert outcome(pkg.gaps, mine, start, end) == outcome(gaps, theirs, start, end), (points, start, end)
        for duration in (0, 1, 3, 6):
            got = outcome(pkg.free_slots, mine, start, end, duration)
            assert got == outcome(free_slots, theirs, start, end, duration), (points, start, end, duration)
        assert outcome(pkg.busiest, mine) == outcome(busiest, theirs), points
        for point in (start, end, rng.randint(0, 40)):
            assert outcome(pkg.coverage, mine, point) == outcome(coverage, theirs, point), (points, point)


def test_random_spans_split_like_the_reference():
    rng = random.Random(2253)
    for _ in range(300):
        a = random_span(rng)
        size = rng.randint(-1, 7)
        (x,), (p,) = spans_of([a])
        assert outcome(pkg.split, x, size) == outcome(split, p, size), (a, size)


def test_results_are_real_spans_and_ints():
    got = pkg.merge([pkg.Span(7, 9), pkg.Span(1, 4), pkg.Span(4, 5)])
    assert [type(s) is pkg.Span for s in got] == [True, True]
    assert canon(got) == canon([Span(1, 5), Span(7, 9)])
    assert canon(pkg.Span(2, 9).length) == canon(7)
    assert canon(pkg.Span(1, 6).intersection(pkg.Span(4, 12))) == canon(Span(4, 6))
    assert canon(pkg.gaps([pkg.Span(3, 4)], 1, 6)) == canon([Span(1, 3), Span(4, 6)])
    assert canon(pkg.total_length([pkg.Span(0, 3), pkg.Span(1, 4)])) == canon(4)
    assert canon(pkg.busiest([pkg.Span(0, 3), pkg.Span(1, 4)])) == canon(2)
    assert canon(pkg.coverage([pkg.Span(0, 3), pkg.Span(1, 4)], 1)) == canon(2)
    assert canon(pkg.Span(1, 2).contains(1)) == canon(True)
