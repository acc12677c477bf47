"""Print the distinct lines of a file, each once, in the order they first appear.

Usage: python3 dedupe.py FILE
"""

import sys


def dedupe(lines):
    seen = []
    out = []
    for line in lines:
        if line not in seen:
            seen.append(line)
            out.append(line)
    return out


def main():
    with open(sys.argv[1]) as f:
        lines = f.read().splitlines()
    for line in dedupe(lines):
        print(line)


if __name__ == "__main__":
    main()
