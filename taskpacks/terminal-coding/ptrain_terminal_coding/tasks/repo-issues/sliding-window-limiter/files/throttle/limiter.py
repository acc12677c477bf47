"""A sliding-window limiter: at most `limit` requests per key in any `window_s` seconds."""

import time
from collections import defaultdict, deque


class SlidingWindowLimiter:
    def __init__(self, limit, window_s, clock=time.monotonic):
        self.limit, self.window_s, self.clock = limit, window_s, clock
        self._hits = defaultdict(deque)

    def _prune(self, key, now):
        hits = self._hits[key]
        while hits and hits[0] < now - self.window_s:
            hits.popleft()
        return hits

    def allow(self, key):
        now = self.clock()
        hits = self._prune(key, now)
        hits.append(now)
        return len(hits) <= self.limit

    def remaining(self, key):
        return self.limit - len(self._prune(key, self.clock()))

    def reset_at(self, key):
        hits = self._prune(key, self.clock())
        return hits[0] + self.window_s if hits else None
