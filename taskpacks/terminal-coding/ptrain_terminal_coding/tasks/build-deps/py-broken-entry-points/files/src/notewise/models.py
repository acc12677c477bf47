"""A note."""

from dataclasses import dataclass, field

from notewise.storage import Store


@dataclass
class Note:
    id: int
    text: str
    tags: list = field(default_factory=list)

    def save(self, store: "Store"):
        store.put(self)
