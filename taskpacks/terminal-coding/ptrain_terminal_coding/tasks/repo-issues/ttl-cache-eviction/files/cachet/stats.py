"""Hit and miss counters."""

from dataclasses import dataclass


@dataclass
class Stats:
    hits: int = 0
    misses: int = 0

    @property
    def ratio(self):
        total = self.hits + self.misses
        return self.hits / total if total else 0.0
