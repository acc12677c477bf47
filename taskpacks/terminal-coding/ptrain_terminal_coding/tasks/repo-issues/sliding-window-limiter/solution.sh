cd /workspace && python3 - <<'PY'
from pathlib import Path
p = Path("throttle/limiter.py")
s = p.read_text()
s = s.replace("while hits and hits[0] < now - self.window_s:", "while hits and hits[0] + self.window_s <= now:")
s = s.replace("""        hits.append(now)
        return len(hits) <= self.limit""", """        if len(hits) >= self.limit:
            return False
        hits.append(now)
        return True""")
s = s.replace("return self.limit - len(self._prune(key, self.clock()))", "return max(0, self.limit - len(self._prune(key, self.clock())))")
p.write_text(s)
PY
