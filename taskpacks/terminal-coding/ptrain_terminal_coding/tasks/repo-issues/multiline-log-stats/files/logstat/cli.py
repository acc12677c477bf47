"""python3 -m logstat FILE... [--level LEVEL]"""

import argparse
import json

from logstat.aggregate import SEVERITY, summarize
from logstat.parser import parse


def main(argv=None):
    parser = argparse.ArgumentParser(prog="logstat")
    parser.add_argument("files", nargs="+")
    parser.add_argument("--level", default="DEBUG", choices=sorted(SEVERITY))
    args = parser.parse_args(argv)
    records = []
    for name in args.files:
        with open(name, encoding="utf-8") as f:
            records.extend(parse(f))
    print(json.dumps(summarize(records, args.level), sort_keys=False))
    return 0
