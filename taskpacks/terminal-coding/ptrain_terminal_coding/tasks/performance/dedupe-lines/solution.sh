cd /workspace && python3 - <<'PY'
from pathlib import Path
p = Path("dedupe.py")
src = p.read_text()
src = src.replace("    seen = []\n", "    seen = set()\n").replace("            seen.append(line)\n", "            seen.add(line)\n")
p.write_text(src)
PY
