"""`ptrain rollout RUN`: episodes of a taskpack's tasks into the run's store, with live progress.

Resumable: run it again with the same settings and it produces only what the store lacks.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import time
from pathlib import Path

import typer
from rich.console import Console
from rich.live import Live
from rich.table import Table

from ptrain.rollout.chat import resolve_action_format
from ptrain.rollout.config import RolloutConfig, load_config
from ptrain.rollout.metrics import MetricsFile
from ptrain.rollout.parts import build_engine, sandbox_pools
from ptrain.rollout.scheduler import Rollout
from ptrain.sandbox import runtime
from ptrain.store import Store
from ptrain.taskpack import load as load_taskpack
from ptrain.taskpack import require_tasks

console = Console()


def rollout(
    run: Path = typer.Argument(..., help="The run directory (created if missing)."),
    config: Path = typer.Option(None, "--config", help="A TOML file with any of the keys below; flags override it."),
    taskpack: str = typer.Option(None, help="Taskpack name  [default: terminal-coding]"),
    split: str = typer.Option(None, help="train, dev or test  [default: train]"),
    tasks: int = typer.Option(None, help="How many tasks (a fixed sample of the split)  [default: all]"),
    task_ids: str = typer.Option(None, "--task-ids", help="Comma-separated task ids instead of a sample."),
    category: str = typer.Option(None, help="Only tasks of these categories, comma-separated."),
    difficulty: str = typer.Option(None, help="Only these difficulty tiers, comma-separated (e.g. easy)."),
    samples: int = typer.Option(None, help="Samples per task (one GRPO group)  [default: 4]"),
    model: str = typer.Option(None, help="Packaged model name or checkpoint directory  [default: smollm2-135m]"),
    engine: str = typer.Option(
        None, help="hf (transformers, here), openai (a server) or gold (replay gold solutions)  [default: hf]"
    ),
    base_url: str = typer.Option(None, "--base-url", help="The openai engine's server, e.g. http://host:8000/v1"),
    concurrency: int = typer.Option(None, help="Episodes in flight, each in its own sandbox  [default: 8]"),
    max_batch: int = typer.Option(
        None, "--max-batch", help="The hf engine's most rows decoded at once; above it, requests wait  [default: 64]"
    ),
    mode: str = typer.Option(None, help="async, or lockstep (the synchronous baseline)  [default: async]"),
    verify: bool = typer.Option(None, "--verify/--no-verify", help="Verify each episode as it finishes."),
    action_format: str = typer.Option(
        None, "--action-format", help="bash, hermes, or auto (bash when the taskpack has a shell)  [default: auto]"
    ),
    max_turns: int = typer.Option(None, "--max-turns"),
    max_new_tokens: int = typer.Option(None, "--max-new-tokens", help="Per model turn."),
    dtype: str = typer.Option(None, help="The hf engine's weights: auto, float32, bfloat16, float16  [default: auto]"),
    engine_process: bool = typer.Option(
        None, "--engine-process/--engine-in-process", help="The hf engine in a process of its own, or a thread here."
    ),
    temperature: float = typer.Option(None),
    top_p: float = typer.Option(
        None, help="nucleus sampling; logprobs are of the renormalised nucleus  [default: 1.0]"
    ),
    seed: int = typer.Option(None),
    state_note: bool = typer.Option(None, "--state-note/--no-state-note", help="Tell the model cwd and changed files."),
    ray: str = typer.Option(None, "--ray", help="Run on Ray workers: the cluster address (auto, host:port, local)."),
    workers: int = typer.Option(
        None, help="With --ray: workers, each with an engine and sandboxes  [default: 1 per node]"
    ),
) -> None:
    """Roll out episodes: the model acts in sandboxes, episodes and verdicts go to the store."""
    ids, categories, difficulties = (tuple(t for t in v.split(",") if t) if v else None
                                     for v in (task_ids, category, difficulty))  # fmt: skip
    cfg = load_config(config, taskpack=taskpack, split=split, tasks=tasks, task_ids=ids, samples=samples,
                      categories=categories, difficulties=difficulties,
                      model=model, engine=engine, base_url=base_url, concurrency=concurrency, max_batch=max_batch, mode=mode,
                      verify=verify, action_format=action_format, max_turns=max_turns, max_new_tokens=max_new_tokens, dtype=dtype,
                      engine_process=engine_process, temperature=temperature, top_p=top_p, seed=seed, state_note=state_note, ray=ray, workers=workers)  # fmt: skip
    report = asyncio.run(run_rollout(run, cfg))
    summary = report.as_dict()
    console.print(summary_table(summary))
    for error in report.errors[:10]:
        console.print(f"[red]✗[/] {error}", highlight=False)


async def run_rollout(run: Path, cfg: RolloutConfig, live: bool = True):
    """Build the parts (store, taskpack, engine, pools), run the scheduler, keep the metrics file.

    With `cfg.ray` the parts live in Ray workers (ptrain/scale/workers.py) and this process hands out groups."""
    pack = load_taskpack(cfg.taskpack)
    require_tasks(pack, cfg.split, cfg.categories, cfg.difficulties)
    store = Store(run, create=True)
    cfg = dataclasses.replace(cfg, action_format=resolve_action_format(cfg.action_format, pack.tools()))
    metrics = MetricsFile(store.path, "rollout")
    metrics.write("config", dataclasses.asdict(cfg))
    if cfg.ray:
        report = await _ray_rollout(run, cfg, metrics, live)
    else:
        runtime.ensure_service()
        engine, fmt = build_engine(pack, cfg)
        try:
            async with sandbox_pools(cfg) as pools:
                scheduler = Rollout(cfg, store, pack, engine, fmt, pools)
                watcher = asyncio.create_task(_watch(scheduler, metrics, live))
                try:
                    report = await scheduler.run()
                finally:
                    watcher.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await watcher
        finally:
            await engine.close()
    metrics.write("summary", report.as_dict())
    metrics.close()
    return report


async def _ray_rollout(run: Path, cfg: RolloutConfig, metrics: MetricsFile, live: bool):
    """The same run over Ray workers, with the same progress display and metrics snapshots."""
    from ptrain.scale.workers import ray_rollout

    display = Live(console=console, refresh_per_second=4, transient=True) if live and console.is_terminal else None
    last = {"tokens": 0.0, "time": time.monotonic(), "line": 0.0}

    def show(snapshot: dict) -> None:
        now = time.monotonic()
        tokens = snapshot.get("generated_tokens", 0.0)
        snapshot["tokens_per_s_now"] = max(tokens - last["tokens"], 0.0) / max(now - last["time"], 1e-9)
        last.update(tokens=tokens, time=now)
        metrics.write("snapshot", snapshot)
        if display:
            display.update(progress_view(snapshot))
        elif live and now - last["line"] > 30:
            last["line"] = now
            console.print(progress_line(snapshot), highlight=False)

    with display or contextlib.nullcontext():
        return await ray_rollout(run, cfg, show)


async def _watch(scheduler: Rollout, metrics: MetricsFile, live: bool) -> None:
    """Redraw the progress twice a second; a snapshot to the metrics file every second."""
    last_tokens, last_time, last_line = scheduler.engine.stats().generated_tokens, time.monotonic(), 0.0
    display = Live(console=console, refresh_per_second=4, transient=True) if live and console.is_terminal else None
    with display or contextlib.nullcontext():
        while True:
            await asyncio.sleep(1.0)
            stats, now = scheduler.engine.stats(), time.monotonic()
            tokens_per_s = (stats.generated_tokens - last_tokens) / max(now - last_time, 1e-9)
            last_tokens, last_time = stats.generated_tokens, now
            snapshot = {**scheduler.meter.snapshot(), **scheduler.report.as_dict(), "tokens_per_s_now": tokens_per_s,
                        "engine_busy_s_total": stats.busy_s, "engine_waiting": stats.waiting,
                        "engine_running": stats.running}  # fmt: skip
            metrics.write("snapshot", snapshot)
            if display:
                display.update(progress_view(snapshot))
            elif live and now - last_line > 30:
                last_line = now
                console.print(progress_line(snapshot), highlight=False)


def progress_view(s: dict) -> Table:
    table = Table(show_header=False, box=None, padding=(0, 2))
    table.add_row("episodes", f"{s['finished']}/{s['planned']} done ({s['skipped']} already stored)",
                  "in flight", f"{s['in_generate']:.0f} at the engine, {s['in_tools']:.0f} in tools, "
                  f"{s['in_setup']:.0f} starting, {s['in_verify']:.0f} verifying")  # fmt: skip
    busy = s["engine_busy_fraction"]
    table.add_row("tokens/s", f"{s['tokens_per_s_now']:.0f}", "engine busy",
                  f"{100 * busy:.0f}% of demand" if busy is not None else "-")  # fmt: skip
    reward = s["mean_reward"]
    table.add_row("verified", f"{s['verified']} ({s['passed']} passed)", "mean reward",
                  f"{reward:.3f}" if reward is not None else "-")  # fmt: skip
    table.add_row("errors", f"{s['statuses'].get('error', 0)} episodes, {s['infra_retries']} retries",
                  "tool wait", f"{s['tools_episode_s']:.0f} episode-s")  # fmt: skip
    return table


def progress_line(s: dict) -> str:
    return (
        f"rollout: {s['finished']}/{s['planned']} episodes, {s['in_generate']:.0f} at the engine, "
        f"{s['in_tools']:.0f} in tools, {s['tokens_per_s_now']:.0f} tokens/s, {s['verified']} verified"
    )


def summary_table(summary: dict) -> Table:
    table = Table(title="rollout", show_header=False)
    for key, value in summary.items():
        shown = json.dumps(value) if isinstance(value, dict) else f"{value:.3g}" if isinstance(value, float) else value
        table.add_row(key, str(shown))
    return table
