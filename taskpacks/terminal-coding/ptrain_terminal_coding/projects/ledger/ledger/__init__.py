"""An inventory ledger: stock per item and location, every change recorded, with undo and reports."""

from dataclasses import dataclass


class StockError(Exception):
    pass


@dataclass(frozen=True)
class Entry:
    item: str
    location: str
    change: int
    note: str = ""


class Ledger:
    def __init__(self):
        self.entries = []
        self.prices = {}

    def set_price(self, item, price):
        if price < 0:
            raise ValueError("a price cannot be negative")
        self.prices[item] = price

    def quantity(self, item, location=None):
        return sum(e.change for e in self.entries if e.item == item and (location is None or e.location == location))

    def receive(self, item, location, count, note=""):
        if count <= 0:
            raise ValueError("receive a positive count")
        self.entries.append(Entry(item, location, count, note))

    def ship(self, item, location, count, note=""):
        if count <= 0:
            raise ValueError("ship a positive count")
        available = self.quantity(item, location)
        if count > available:
            raise StockError(f"only {available} of {item} at {location}, cannot ship {count}")
        self.entries.append(Entry(item, location, -count, note))

    def move(self, item, source, target, count):
        if source == target:
            raise ValueError("source and target are the same")
        self.ship(item, source, count, note=f"to {target}")
        self.receive(item, target, count, note=f"from {source}")

    def undo(self):
        """Take back the last change (both halves of a move)."""
        if not self.entries:
            raise StockError("nothing to undo")
        last = self.entries.pop()
        if last.note.startswith("from ") and self.entries and self.entries[-1].note == f"to {last.location}":
            self.entries.pop()
        return last

    def locations(self, item):
        totals = {}
        for e in self.entries:
            if e.item == item:
                totals[e.location] = totals.get(e.location, 0) + e.change
        return {location: count for location, count in sorted(totals.items()) if count != 0}

    def items(self):
        return sorted({e.item for e in self.entries if self.quantity(e.item) > 0})

    def value(self, item=None):
        names = [item] if item is not None else self.items()
        return sum(self.quantity(name) * self.prices.get(name, 0) for name in names)

    def low_stock(self, threshold):
        """Items whose total stock is at or below `threshold`, lowest first (ties by name)."""
        known = sorted({e.item for e in self.entries})
        low = [(self.quantity(name), name) for name in known if self.quantity(name) <= threshold]
        return [name for _, name in sorted(low)]

    def history(self, item, limit=None):
        """The item's changes, newest first, at most `limit` of them."""
        changes = [e for e in reversed(self.entries) if e.item == item]
        return changes if limit is None else changes[:limit]

    def report(self):
        lines = []
        for name in self.items():
            where = ", ".join(f"{loc}={count}" for loc, count in self.locations(name).items())
            lines.append(f"{name}: {self.quantity(name)} ({where})")
        return "\n".join(lines)
