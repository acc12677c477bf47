"""Install requirements.txt from vendor/ into .deps/ (offline; our CI has no package index).

Each vendor/NAME-VERSION/ holds the package NAME/ and requires.txt (one requirement a line).
A requirement is NAME followed by comma-separated constraints (==, >=, >, <=, <), or NAME alone.
The newest version satisfying every constraint on a name is chosen; dependencies are followed.
"""

import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQ = re.compile(r"^([A-Za-z0-9_]+)\s*(.*)$")
OPS = {"==": lambda a, b: a == b, ">=": lambda a, b: a >= b, ">": lambda a, b: a > b,
       "<=": lambda a, b: a <= b, "<": lambda a, b: a < b}  # fmt: skip


def version(text):
    return tuple(int(x) for x in text.split("."))


def parse(line):
    name, rest = REQ.match(line.strip()).groups()
    constraints = []
    for part in filter(None, (p.strip() for p in rest.split(","))):
        op = next(op for op in ("==", ">=", "<=", ">", "<") if part.startswith(op))
        constraints.append((op, version(part[len(op):].strip())))
    return name, constraints


def available():
    found = {}
    for d in (ROOT / "vendor").iterdir():
        name, _, ver = d.name.rpartition("-")
        found.setdefault(name, []).append(version(ver))
    return found


def requirements(path):
    return [parse(line) for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def resolve(reqs):
    pool, constraints, chosen = available(), {}, {}
    queue = list(reqs)
    while queue:
        name, cons = queue.pop(0)
        if name not in pool:
            raise SystemExit(f"install: no package {name} in vendor/")
        constraints.setdefault(name, []).extend((c, f"{name}{c[0]}{'.'.join(map(str, c[1]))}") for c in cons)
        ok = [v for v in pool[name] if all(OPS[op](v, want) for (op, want), _ in constraints[name])]
        if not ok:
            said = ", ".join(text for _, text in constraints[name])
            raise SystemExit(f"install: conflict on {name}: nothing in vendor/ satisfies {said}")
        best = max(ok)
        if chosen.get(name) != best:
            chosen[name] = best
            deps = ROOT / "vendor" / f"{name}-{'.'.join(map(str, best))}" / "requires.txt"
            queue.extend(requirements(deps))
    return chosen


def main():
    chosen = resolve(requirements(ROOT / "requirements.txt"))
    target = ROOT / ".deps"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    for name, ver in sorted(chosen.items()):
        shutil.copytree(ROOT / "vendor" / f"{name}-{'.'.join(map(str, ver))}" / name, target / name)
        print(f"installed {name} {'.'.join(map(str, ver))}")


if __name__ == "__main__":
    sys.exit(main())
