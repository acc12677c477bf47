"""How the listing commands print: a table on a terminal, the same table uncut in a pipe, or JSON.

Rich fits a table to the terminal, and to 80 columns when stdout is not one, cutting cells to
`terminal-cod…`: then `ptrain taskpacks list | grep terminal-coding` finds nothing. In a pipe the
table is printed as wide as its content instead, so every name stays whole. `--json` prints the
rows as a list of objects (or a command's one object) and nothing else on stdout, for scripts.

Warnings from libraries (transformers' and torch's deprecation notices, say) go to ptrain's log,
`$PTRAIN_HOME/logs/warnings.log`, not the terminal: they are about the libraries' next versions,
not about the run, and they landed in the middle of a command's output. ptrain's own warnings (a
`StoreWarning`, a taskpack's) print on stderr as one line, `warning: MESSAGE`, without Python's
source line.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

JSON_OPTION = typer.Option(False, "--json", help="Machine-readable JSON on stdout, and nothing else there.")
PIPE_WIDTH = 100_000  # wide enough for any row; a table takes only the width its cells need


def console(**kwargs: Any) -> Console:
    """A console on stdout as it is now: fitted to the terminal, or in a pipe wide enough to cut nothing."""
    out = Console(**kwargs)
    return out if out.is_terminal else Console(width=PIPE_WIDTH, **kwargs)


def print_json(value: Any) -> None:
    """One JSON document on stdout (paths and other objects as their strings)."""
    sys.stdout.write(json.dumps(value, indent=1, default=str) + "\n")


def cell(value: Any) -> str | Text:
    """A value as a table shows it: nothing for None, ✓ for True, three figures for a float; Text as it is."""
    if isinstance(value, Text):
        return value
    if value is None or value is False:
        return ""
    if value is True:
        return Text("✓", "green")
    if isinstance(value, float):
        return f"{value:.3g}"
    return escape(str(value))


def print_rows(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    as_json: bool = False,
    *,
    title: str = "",
    headers: Mapping[str, str] | None = None,
    cells: Mapping[str, Callable[[Any], str | Text]] | None = None,
    right: Collection[str] = (),
) -> None:
    """Rows keyed by column as a table on stdout (header: the key with spaces), or with `as_json` a JSON list.

    `cells` formats a column's values for the table (default `cell`); the JSON keeps the values as they are."""
    if as_json:
        print_json([dict(row) for row in rows])
        return
    headers, cells = headers or {}, cells or {}
    table = Table(title=escape(title) if title else None)
    for key in columns:
        table.add_column(headers.get(key, key.replace("_", " ")), justify="right" if key in right else "left",
                         overflow="fold")  # fmt: skip
    for row in rows:
        table.add_row(*(cells.get(key, cell)(row.get(key)) for key in columns))
    console().print(table)


def from_ptrain(category: type[Warning], filename: str) -> bool:
    """A warning of ptrain's or a taskpack's: its class is theirs, or their code raised it."""
    if category.__module__.startswith("ptrain"):
        return True
    roots = [os.path.dirname(module.__file__) + os.sep for name, module in list(sys.modules.items())
             if name.startswith("ptrain") and "." not in name and getattr(module, "__file__", None)]  # fmt: skip
    return any(str(filename).startswith(root) for root in roots)


def log_library_warnings(path: Path) -> None:
    """From now on a warning raised outside ptrain is appended to `path` (opened at the first), not printed;
    one of ptrain's prints on stderr as `warning: MESSAGE`, uncut."""
    logger = logging.getLogger("ptrain.library_warnings")
    logger.propagate = False  # not to the console handlers of `ptrain train`'s logging
    if not logger.handlers:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(path, delay=True)
        handler.setFormatter(logging.Formatter(f"%(asctime)s pid %(process)d {' '.join(sys.argv[1:3])}: %(message)s"))
        logger.addHandler(handler)

    def showwarning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
        if from_ptrain(category, filename):
            Console(stderr=True).print(f"[yellow]warning:[/] {escape(str(message))}", highlight=False, soft_wrap=True)
        else:
            logger.warning(warnings.formatwarning(message, category, filename, lineno, line).rstrip())

    warnings.showwarning = showwarning
