"""`ptrain models`: list the packaged models and prepare (convert once) their checkpoints."""

from __future__ import annotations

import typer
from rich.console import Console

from ptrain.cli import output
from ptrain.engine import models

app = typer.Typer(help="Packaged models and their converted checkpoints.", no_args_is_help=True)
console = Console()


@app.command("ls")
def ls(as_json: bool = output.JSON_OPTION) -> None:
    """Packaged models, where their checkpoint is cached, and whether it is ready."""
    rows = [{"name": name, "package_file": packaged.gguf_file, "checkpoint": str(models.cache_dir(name)),
             "ready": models.is_prepared(name)} for name, packaged in models.PACKAGED.items()]  # fmt: skip
    output.print_rows(rows, ("name", "package_file", "checkpoint", "ready"), as_json, title="models")


@app.command()
def prepare(name: str = typer.Argument(models.DEFAULT_MODEL, help="A packaged model name.")) -> None:
    """Convert a packaged GGUF model once into a trainable safetensors checkpoint."""
    with console.status(f"converting {name} (once; about a minute)"):
        path = models.resolve_model(name)
    console.print(f"[green]✓[/] {name}: {path}")
