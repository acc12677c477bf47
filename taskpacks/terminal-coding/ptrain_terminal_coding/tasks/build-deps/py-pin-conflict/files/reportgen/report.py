"""python3 -m reportgen LISTING.csv --today YYYY-MM-DD

LISTING.csv has the columns path,bytes,modified (ISO date). One line per file, biggest first
(then by path): path, human-readable size, age in days on --today. Then a total line.
"""

import argparse
import csv

import chronos
import fmtlib


def main(argv=None):
    parser = argparse.ArgumentParser(prog="reportgen")
    parser.add_argument("listing")
    parser.add_argument("--today", required=True)
    args = parser.parse_args(argv)
    today = chronos.parse_iso(args.today)
    with open(args.listing, newline="") as f:
        rows = [(r["path"], int(r["bytes"]), chronos.parse_iso(r["modified"])) for r in csv.DictReader(f)]
    rows.sort(key=lambda r: (-r[1], r[0]))
    for path, size, modified in rows:
        print(f"{path}\t{fmtlib.format_size(size)}\t{chronos.days_between(modified, today)} days")
    print(f"total\t{fmtlib.format_size(sum(r[1] for r in rows))}\t{len(rows)} files")
    return 0
