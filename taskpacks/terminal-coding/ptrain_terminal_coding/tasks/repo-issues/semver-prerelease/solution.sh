cd /workspace && python3 - <<'PY'
from pathlib import Path
p = Path("verkit/version.py")
s = p.read_text()
s = s.replace('''    def key(self):
        return (self.major, self.minor, self.patch, self.prerelease, self.build)
''', '''    def key(self):
        """Precedence per SemVer 2.0.0: a release above its pre-releases, build metadata ignored."""
        if not self.prerelease:
            pre = (1,)
        else:
            pre = (0, tuple((0, int(x), "") if x.isdigit() else (1, 0, x) for x in self.prerelease.split(".")))
        return (self.major, self.minor, self.patch, pre)
''')
p.write_text(s)
PY
