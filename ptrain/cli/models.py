"""`ptrain models`: list the packaged models and prepare (convert once) their checkpoints."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from ptrain.engine import models

app = typer.Typer(help="Packaged models and their converted checkpoints.", no_args_is_help=True)
console = Console()


@app.command("ls")
def ls() -> None:
    """Packaged models, where their checkpoint is cached, and whether it is ready."""
    table = Table(title="models")
    for col in ("name", "package file", "checkpoint", "ready"):
        table.add_column(col)
    for name, packaged in models.PACKAGED.items():
        table.add_row(name, packaged.gguf_file, str(models.cache_dir(name)), "✓" if models.is_prepared(name) else "")
    console.print(table)


@app.command()
def prepare(name: str = typer.Argument(models.DEFAULT_MODEL, help="A packaged model name.")) -> None:
    """Convert a packaged GGUF model once into a trainable safetensors checkpoint."""
    with console.status(f"converting {name} (once; about a minute)"):
        path = models.resolve_model(name)
    console.print(f"[green]✓[/] {name}: {path}")
