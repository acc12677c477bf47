"""`ptrain report RUN`: the run's numbers and plots as one self-contained HTML file (ptrain/report.py)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from ptrain.errors import ConfigError
from ptrain.report import build_report

console = Console()


def report(
    run: Path = typer.Argument(..., help="The run directory (a training run, or an evaluation run)."),
    evals: list[Path] = typer.Option(None, "--eval", help="Evaluation runs to show, in order  [default: RUN/eval/*]"),
    out: Path = typer.Option(None, "--out", help="Where to write the page  [default: RUN/report.html]"),
) -> None:
    """Write one HTML file with training curves, before/after bars, episode and engine plots, tool errors."""
    if not run.is_dir():
        raise ConfigError(f"no run directory {run}")
    for d in evals or ():
        if not (d / "eval.json").is_file():
            raise ConfigError(f"{d} is not an evaluation run (no eval.json)", fix=f"ptrain eval {d} ... first")
    path = build_report(run, evals or (), out)
    console.print(f"[green]report[/] {path}")
