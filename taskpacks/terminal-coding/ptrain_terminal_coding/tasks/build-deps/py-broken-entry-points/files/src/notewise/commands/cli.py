"""The command line."""

import argparse
import os
from pathlib import Path

import notewise
from notewise.models import Note
from notewise.storage import Store


def main(argv=None):
    parser = argparse.ArgumentParser(prog="notewise")
    parser.add_argument("--version", action="version", version=f"notewise {notewise.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add")
    add.add_argument("text")
    add.add_argument("--tag", action="append", default=[])
    listing = sub.add_parser("list")
    listing.add_argument("--tag")
    args = parser.parse_args(argv)
    store = Store(os.environ.get("NOTEWISE_FILE", Path.home() / ".notewise.json"))
    if args.command == "add":
        note = Note(store.next_id(), args.text, args.tag)
        note.save(store)
        print(note.id)
    else:
        for note in store.load():
            if args.tag is None or args.tag in note.tags:
                print(f"{note.id}\t{note.text}\t{','.join(note.tags)}")
    return 0
