cd /workspace && cat > cachet/cache.py <<'PY'
"""TTLCache: least recently used eviction, entries expire ttl_s after they were set."""

import time
from collections import OrderedDict


class TTLCache:
    def __init__(self, capacity, ttl_s, clock=time.monotonic, stats=None):
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity, self.ttl_s, self.clock, self.stats = capacity, ttl_s, clock, stats
        self._data = OrderedDict()  # key -> (value, expires_at), least recently used first

    def _expire(self):
        now = self.clock()
        for key in [k for k, (_, expires) in self._data.items() if expires <= now]:
            del self._data[key]

    def set(self, key, value):
        self._expire()
        self._data.pop(key, None)
        while len(self._data) >= self.capacity:
            self._data.popitem(last=False)
        self._data[key] = (value, self.clock() + self.ttl_s)

    def get(self, key, default=None):
        self._expire()
        if key not in self._data:
            if self.stats:
                self.stats.misses += 1
            return default
        self._data.move_to_end(key)
        if self.stats:
            self.stats.hits += 1
        return self._data[key][0]

    def __contains__(self, key):
        self._expire()
        return key in self._data

    def __len__(self):
        self._expire()
        return len(self._data)

    def keys(self):
        self._expire()
        return list(self._data)
PY
