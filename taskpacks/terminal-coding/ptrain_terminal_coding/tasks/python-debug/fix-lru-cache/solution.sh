cd /workspace && python3 - <<'PY'
from pathlib import Path
p = Path("lru.py")
src = p.read_text()
src = src.replace(
    "            self.hits += 1\n            return self.data[key]\n",
    "            self.hits += 1\n            self.data.move_to_end(key)\n            return self.data[key]\n",
)
src = src.replace(
    "        if len(self.data) >= self.capacity:\n            self.data.popitem(last=True)\n        self.data[key] = value\n",
    "        if key in self.data:\n            self.data.move_to_end(key)\n        elif len(self.data) >= self.capacity:\n            self.data.popitem(last=False)\n        self.data[key] = value\n",
)
p.write_text(src)
PY
