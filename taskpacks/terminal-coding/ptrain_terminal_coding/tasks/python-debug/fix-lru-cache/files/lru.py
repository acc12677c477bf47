"""A least-recently-used cache with a fixed capacity."""

from collections import OrderedDict


class LRUCache:
    """Holds at most `capacity` entries; when full, adding a new key evicts the entry that was
    used least recently. Both get() of a present key and put() count as a use."""

    def __init__(self, capacity):
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.data = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key, default=None):
        """The value for `key` (marking it as just used), or `default` if absent.
        Counts a hit or a miss."""
        if key in self.data:
            self.hits += 1
            return self.data[key]
        self.misses += 1
        return default

    def put(self, key, value):
        """Store `value` under `key`, marking it as just used; evict the least recently used
        entry if the cache would grow past its capacity."""
        if len(self.data) >= self.capacity:
            self.data.popitem(last=True)
        self.data[key] = value

    def __contains__(self, key):
        """Membership test; does not count as a use."""
        return key in self.data

    def __len__(self):
        return len(self.data)

    def keys(self):
        """Keys from least to most recently used."""
        return list(self.data)
