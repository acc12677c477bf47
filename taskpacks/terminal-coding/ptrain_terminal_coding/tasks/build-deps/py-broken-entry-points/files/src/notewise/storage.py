"""Notes in a JSON file."""

import json
from pathlib import Path

from notewise.models import Note


class Store:
    def __init__(self, path):
        self.path = Path(path)

    def load(self):
        if not self.path.exists():
            return []
        return [Note(**item) for item in json.loads(self.path.read_text())]

    def put(self, note):
        notes = [n for n in self.load() if n.id != note.id] + [note]
        notes.sort(key=lambda n: n.id)
        self.path.write_text(json.dumps([vars(n) for n in notes], indent=1))

    def next_id(self):
        return max((n.id for n in self.load()), default=0) + 1
