"""`ptrain images`: build and list ptrain's container images (base and taskpacks)."""

from __future__ import annotations

import typer
from rich.console import Console

from ptrain import taskpack
from ptrain.cli import output
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
def ls(url: str | None = typer.Option(None, help="Podman service URL."), as_json: bool = output.JSON_OPTION) -> None:
    """List ptrain's images, marking the ones the installed code would use."""
    url = runtime.ensure_service(url)
    current = {images.base_image()}
    for name in taskpack.installed():
        try:
            current.add(images.taskpack_image(taskpack.load(name).image))
        except Exception:  # a broken taskpack shows up in `ptrain doctor`
            pass
    rows = [{"image": row["name"], "kind": row["kind"], "size_mb": row["size_mb"], "created": row["created"],
             "current": row["name"] in current} for row in images.list_images(url)]  # fmt: skip
    output.print_rows(rows, ("image", "kind", "size_mb", "created", "current"), as_json, title="ptrain images",
                      headers={"size_mb": "size"}, cells={"size_mb": lambda mb: f"{mb:.0f} MB"}, right=("size_mb",))  # fmt: skip
