"""`ptrain verify RUN`: score stored episodes in fresh sandboxes and append the verdicts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import Progress

from ptrain.sandbox import PoolSet, runtime
from ptrain.store import Store
from ptrain.verify import RunVerification, verify_run

console = Console()


def verify(
    run: Path = typer.Argument(..., help="The run directory."),
    reverify: bool = typer.Option(False, "--reverify", help="Verify episodes that already have a verdict again."),
    concurrency: int = typer.Option(8, help="Episodes verified at once (per worker with --ray)."),
    ray: str = typer.Option(None, "--ray", help="Run on Ray workers: the cluster address (auto, host:port, local)."),
    workers: int = typer.Option(0, help="With --ray: workers, each with its own sandboxes  [default: 1 per node]"),
) -> None:
    """Verify every episode without a verdict (resumable: a stopped run picks up where it was)."""
    store = Store(run)
    if ray:
        return _ray_verify(run, reverify, concurrency, ray, workers)
    runtime.ensure_service()

    async def go() -> RunVerification:
        with Progress(console=console, transient=True) as progress:
            bar = progress.add_task("verifying", total=None)
            async with PoolSet(size=min(concurrency, 8), max_active=concurrency) as pools:
                return await verify_run(store, pools, reverify, concurrency, lambda n: progress.advance(bar, n))

    report = asyncio.run(go())
    console.print(
        f"{report.verified} verified ({report.passed} passed), {report.skipped} skipped, "
        f"{len(report.errors)} failed to verify (no verdict written; rerun to retry)"
    )
    for error in report.errors[:20]:
        console.print(f"[red]✗[/] {error}", highlight=False)
    if report.errors:
        raise typer.Exit(1)


def _ray_verify(run: Path, reverify: bool, concurrency: int, ray: str, workers: int) -> None:
    """The same over Ray workers; each verifies a few episodes at a time in its own sandboxes."""
    from ptrain.rollout.config import RolloutConfig
    from ptrain.scale.workers import ray_verify

    cfg = RolloutConfig(engine="gold", verify_concurrency=concurrency, ray=ray, workers=workers)
    with Progress(console=console, transient=True) as progress:
        bar = progress.add_task("verifying", total=None)
        result = asyncio.run(ray_verify(run, cfg, reverify, lambda n: progress.advance(bar, n)))
    console.print(
        f"{result['verified']} verified ({result['passed']} passed), {result['skipped']} skipped, "
        f"{len(result['errors'])} failed to verify (no verdict written; rerun to retry)"
    )
    for error in result["errors"][:20]:
        console.print(f"[red]✗[/] {error}", highlight=False)
    if result["errors"]:
        raise typer.Exit(1)
