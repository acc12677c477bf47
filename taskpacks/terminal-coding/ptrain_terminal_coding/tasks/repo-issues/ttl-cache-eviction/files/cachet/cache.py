"""TTLCache: least recently used eviction, entries expire ttl_s after they were set."""

import time
from collections import OrderedDict


class TTLCache:
    def __init__(self, capacity, ttl_s, clock=time.monotonic, stats=None):
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity, self.ttl_s, self.clock, self.stats = capacity, ttl_s, clock, stats
        self._data = OrderedDict()  # key -> (value, expires_at)

    def set(self, key, value):
        if key in self._data:
            del self._data[key]
        elif len(self._data) >= self.capacity:
            self._data.popitem(last=False)
        self._data[key] = (value, self.clock() + self.ttl_s)

    def get(self, key, default=None):
        item = self._data.get(key)
        if item is None or item[1] < self.clock():
            if self.stats:
                self.stats.misses += 1
            return default
        if self.stats:
            self.stats.hits += 1
        return item[0]

    def __contains__(self, key):
        return key in self._data

    def __len__(self):
        return len(self._data)

    def keys(self):
        return list(self._data)
