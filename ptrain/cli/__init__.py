"""The `ptrain` command: one typer sub-app per file, registered here.

`main` is the console script. It catches `PtrainError` in one place and prints it without a
traceback (the message says what was wrong and what to do); anything else is a bug and keeps
its traceback. Libraries' warnings go to `$PTRAIN_HOME/logs/warnings.log`, not the terminal
(ptrain/cli/output.py).
"""

from __future__ import annotations

import os
import sys

import typer
from rich.console import Console
from rich.text import Text

from ptrain.cli import doctor, images, models, output, rollout, sandbox, taskpacks, verify, warmstart
from ptrain.cli import eval as eval_cli
from ptrain.cli import report as report_cli
from ptrain.cli import serve as serve_cli
from ptrain.cli import store as store_cli
from ptrain.cli import train as train_cli
from ptrain.errors import PtrainError
from ptrain.paths import home

app = typer.Typer(
    name="ptrain",
    help="Post-train language models with reinforcement learning on real tasks.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.command("doctor")(doctor.doctor)
app.command("eval")(eval_cli.eval_command)
app.command("report")(report_cli.report)
app.command("rollout")(rollout.rollout)
app.command("serve")(serve_cli.serve)
app.command("train")(train_cli.train)
app.command("verify")(verify.verify)
app.command("warmstart")(warmstart.warmstart)
app.add_typer(images.app, name="images")
app.add_typer(models.app, name="models")
app.add_typer(sandbox.app, name="sandbox")
app.add_typer(store_cli.app, name="store")
app.add_typer(taskpacks.app, name="taskpacks")

err = Console(stderr=True)


def main() -> None:
    output.log_library_warnings(home() / "logs" / "warnings.log")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # transformers' "Loading weights" bar too
    try:
        app()
    except PtrainError as e:
        err.print(Text.assemble(("error: ", "bold red"), str(e)))
        sys.exit(2)
