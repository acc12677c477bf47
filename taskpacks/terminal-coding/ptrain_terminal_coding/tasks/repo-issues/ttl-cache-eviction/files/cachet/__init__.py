"""cachet: an LRU cache whose entries expire."""

from cachet.cache import TTLCache
from cachet.stats import Stats

__all__ = ["TTLCache", "Stats"]
