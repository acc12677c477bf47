import sys

from mdtoc.toc import build

with open(sys.argv[1], encoding="utf-8") as f:
    print(build(f.read()), end="")
