"""`ptrain images`: build and list ptrain's container images (base and taskpacks)."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from ptrain import taskpack
from ptrain.sandbox import images, runtime

app = typer.Typer(help="Build and list container images.", no_args_is_help=True)
console = Console()


@app.command()
def build(
    taskpack_name: str | None = typer.Option(None, "--taskpack", help="Only this taskpack's image (and the base)."),
    url: str | None = typer.Option(None, help="Podman service URL (default: ptrain's local service)."),
    force: bool = typer.Option(False, help="Rebuild even if an image with the same content tag exists."),
) -> None:
    """Build the base image and every installed taskpack's image; unchanged images are kept."""
    url = runtime.ensure_service(url)
    with console.status("building the base image (mmdebstrap, about a minute the first time)"):
        base = images.build_base(url, force=force)
    console.print(f"[green]✓[/] {base}")
    names = [taskpack_name] if taskpack_name else sorted(taskpack.installed())
    for name in names:
        spec = taskpack.load(name).image
        with console.status(f"building {name}"):
            image = images.build_taskpack(spec, url, force=force)
        console.print(f"[green]✓[/] {image}")


@app.command("ls")
def ls(url: str | None = typer.Option(None, help="Podman service URL.")) -> None:
    """List ptrain's images, marking the ones the installed code would use."""
    url = runtime.ensure_service(url)
    current = {images.base_image()}
    for name in taskpack.installed():
        try:
            current.add(images.taskpack_image(taskpack.load(name).image))
        except Exception:  # a broken taskpack shows up in `ptrain doctor`
            pass
    table = Table(title="ptrain images")
    for col in ("image", "kind", "size", "created", "current"):
        table.add_column(col)
    for row in images.list_images(url):
        table.add_row(
            row["name"], row["kind"], f"{row['size_mb']:.0f} MB", row["created"], "✓" if row["name"] in current else ""
        )
    console.print(table)
