cd /workspace/photos && python3 - <<'PY'
import hashlib
from collections import defaultdict
from pathlib import Path

groups = defaultdict(list)
for p in Path(".").rglob("*"):
    if p.is_file():
        groups[hashlib.sha256(p.read_bytes()).hexdigest()].append(str(p))
dups = sorted(sorted(paths) for paths in groups.values() if len(paths) > 1)
Path("/workspace/duplicates.txt").write_text("".join(" ".join(g) + "\n" for g in dups))
for group in dups:
    for extra in group[1:]:
        Path(extra).unlink()
PY
