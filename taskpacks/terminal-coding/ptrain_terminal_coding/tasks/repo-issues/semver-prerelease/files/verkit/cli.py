"""python3 -m verkit sort | max RANGE (versions on stdin)."""

import sys

from verkit.ranges import satisfies
from verkit.version import Version


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    versions = [Version.parse(line) for line in sys.stdin if line.strip()]
    if argv[:1] == ["sort"]:
        for v in sorted(versions):
            print(v)
        return 0
    if argv[:1] == ["max"] and len(argv) == 2:
        matching = [v for v in versions if satisfies(v, argv[1])]
        if not matching:
            print("no version satisfies " + argv[1], file=sys.stderr)
            return 1
        print(max(matching))
        return 0
    print("usage: python3 -m verkit sort | max RANGE", file=sys.stderr)
    return 2
