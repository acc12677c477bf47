"""The command line: convert and stats."""

import argparse
import sys

from tabkit.reader import read_tsv
from tabkit.schema import ShapeError, check_rows
from tabkit.writer import write_csv


def main(argv=None):
    parser = argparse.ArgumentParser(prog="tabkit")
    sub = parser.add_subparsers(dest="command", required=True)
    convert = sub.add_parser("convert")
    convert.add_argument("source")
    convert.add_argument("target")
    stats = sub.add_parser("stats")
    stats.add_argument("source")
    args = parser.parse_args(argv)
    try:
        header, data = check_rows(read_tsv(args.source))
    except ShapeError as e:
        print(f"tabkit: {e}", file=sys.stderr)
        return 1
    if args.command == "convert":
        write_csv(args.target, [header, *data])
    else:
        print(f"{len(data)} rows, {len(header)} columns")
    return 0
