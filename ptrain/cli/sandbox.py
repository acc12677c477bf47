"""`ptrain sandbox`: run commands or a scripted episode in a fresh sandbox."""

from __future__ import annotations

import asyncio
import time

import typer
from rich.console import Console
from rich.panel import Panel

from ptrain.sandbox import Sandbox, SandboxLimits, images, runtime
from ptrain.sandbox.demo import run_scripted_episode

app = typer.Typer(help="Run commands in isolated sandboxes.", no_args_is_help=True)
console = Console()


def image_or_base(image: str | None) -> str:
    url = runtime.ensure_service()
    return image or images.build_base(url)


@app.command("exec")
def exec_(
    commands: list[str] = typer.Argument(..., help="Shell commands, run one after another in one shell."),
    image: str | None = typer.Option(None, help="Image (default: ptrain's base image)."),
    timeout_s: float = typer.Option(120.0, help="Per-command timeout in seconds."),
    memory_mb: int = typer.Option(2048, help="Memory limit of the sandbox."),
) -> None:
    """Run shell commands in a fresh sandbox and print each result."""

    async def run() -> int:
        sandbox = await Sandbox.create(image_or_base(image), limits=SandboxLimits(memory_mb=memory_mb))
        try:
            code = 0
            for command in commands:
                result = await sandbox.exec(command, timeout_s=timeout_s)
                console.print(f"[bold]$ {command}[/]", highlight=False)
                console.out(result.output, end="", highlight=False)
                console.print(
                    f"[dim]exit {result.exit_code}{' (timed out)' if result.timed_out else ''}, {result.duration_s * 1000:.1f} ms[/]"
                )
                code = code or result.exit_code
            return code
        finally:
            await sandbox.close()

    raise typer.Exit(asyncio.run(run()))


@app.command()
def demo(image: str | None = typer.Option(None, help="Image (default: ptrain's base image).")) -> None:
    """Replay a scripted coding episode (write code, test, fix, test) in a fresh sandbox."""

    def show(step, result) -> None:
        if result is None:
            console.print(f"[cyan]write[/] {step.arg} ({len(step.content)} bytes)")
        else:
            body = result.output.rstrip() or "(no output)"
            console.print(
                Panel(
                    body,
                    title=f"$ {step.arg}",
                    subtitle=f"exit {result.exit_code} · {result.duration_s * 1000:.1f} ms",
                    title_align="left",
                )
            )

    async def run() -> bool:
        started = time.monotonic()
        sandbox = await Sandbox.create(image_or_base(image))
        console.print(f"sandbox {sandbox.name} ready in {sandbox.created_s * 1000:.0f} ms")
        try:
            episode = await run_scripted_episode(sandbox, show)
        finally:
            await sandbox.close()
        verdict = "[green]passed[/]" if episode.passed else "[red]failed[/]"
        console.print(
            f"scripted episode {verdict}; workspace tar {len(episode.workspace_tar)} bytes; {time.monotonic() - started:.1f} s in all"
        )
        return episode.passed

    if not asyncio.run(run()):
        raise typer.Exit(1)
