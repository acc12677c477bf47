"""`ptrain eval RUN`: a model on a held-out split, scored; `ptrain eval compare A B`: two such runs, paired.

An evaluation is a rollout into its own run directory, with every episode marked as evaluation
(never trained on) and verified as it finishes, then the numbers of ptrain/eval.py over what the
store holds. It resumes like any rollout; `RUN/eval.json` keeps what was evaluated and the summary.

    ptrain eval runs/q/eval/base --split test --tasks 30 --samples 4
    ptrain eval runs/q/eval/trained --adapter runs/q            # the run's latest checkpoint, merged
    ptrain eval runs/api --engine openai --base-url http://host:8000/v1
    ptrain eval compare runs/q/eval/base runs/q/eval/trained
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from ptrain.cli import output
from ptrain.errors import ConfigError
from ptrain.eval import Census, compare, summarize, task_outcomes
from ptrain.rollout.config import load_config
from ptrain.store import Store

console = Console()
EVAL_FILE = "eval.json"


def eval_command(
    run: str = typer.Argument(..., help="The evaluation's run directory; or `compare` followed by two of them."),
    other: list[Path] = typer.Argument(None, help="With `compare`: RUN_A RUN_B.", show_default=False),
    config: Path = typer.Option(None, "--config", help="A TOML file of rollout keys; flags override it."),
    taskpack: str = typer.Option(None, help="[default: terminal-coding]"),
    split: str = typer.Option("test", help="The held-out split: test or dev (train works, but says so)."),
    tasks: int = typer.Option(None, help="How many tasks (a fixed sample of the split)  [default: all]"),
    category: str = typer.Option(None, help="Only tasks of these categories, comma-separated."),
    difficulty: str = typer.Option(None, help="Only these difficulty tiers, comma-separated."),
    samples: int = typer.Option(1, help="Samples per task (k of pass@k goes up to this)."),
    model: str = typer.Option(None, help="Packaged model name or checkpoint directory  [default: smollm2-135m]"),
    adapter: Path = typer.Option(None, help="A training run (its latest checkpoint) or a checkpoint to evaluate."),
    engine: str = typer.Option(None, help="hf (transformers, here) or openai (any OpenAI-compatible server)"),
    base_url: str = typer.Option(None, "--base-url", help="The openai engine's server, e.g. http://host:8000/v1"),
    concurrency: int = typer.Option(None, help="Episodes in flight  [default: 8]"),
    max_turns: int = typer.Option(None, "--max-turns"),
    max_new_tokens: int = typer.Option(None, "--max-new-tokens", help="Per model turn."),
    temperature: float = typer.Option(None, help="[default: 1.0]"),
    seed: int = typer.Option(None),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON only (for machines)."),
    ray: str = typer.Option(None, "--ray", help="Run on Ray workers: the cluster address (auto, host:port, local)."),
    workers: int = typer.Option(
        None, help="With --ray: workers, each with an engine and sandboxes  [default: 1 per node]"
    ),
) -> None:
    """Evaluate a model on a held-out split (pass@k, reward, intervals), or compare two evaluations."""
    if run == "compare":
        if not other or len(other) != 2:
            raise ConfigError("usage: ptrain eval compare RUN_A RUN_B [--json]")
        result = compare_runs(*other)
        if as_json:
            print(json.dumps(result, indent=1))
        else:
            output.console().print(compare_table(result, *other))
            if result["reward_diff"] is not None:
                output.console().print(f"mean reward: A {result['reward_a']:.3f}, B {result['reward_b']:.3f}, "
                                       f"B - A {result['reward_diff']:+.3f} "
                                       f"[{result['reward_diff_ci95'][0]:+.3f}, {result['reward_diff_ci95'][1]:+.3f}]")  # fmt: skip
        return
    if other:
        raise ConfigError(f"unexpected arguments {' '.join(map(str, other))}", fix="ptrain eval RUN [OPTIONS]")
    ids = lambda v: tuple(t for t in v.split(",") if t) if v else None  # noqa: E731
    if adapter is not None:
        model = str(merged_adapter(Path(run), adapter, model))
    cfg = load_config(config, taskpack=taskpack, split=split, tasks=tasks, categories=ids(category),
                      difficulties=ids(difficulty), samples=samples, model=model, engine=engine, base_url=base_url,
                      concurrency=concurrency, max_turns=max_turns, max_new_tokens=max_new_tokens,
                      temperature=temperature, seed=seed, verify=True, evaluation=True, ray=ray,
                      workers=workers)  # fmt: skip
    if cfg.engine == "gold":
        raise ConfigError("the gold engine replays solutions; evaluate a model (hf or openai)")
    if cfg.split == "train" and not as_json:
        console.print("[yellow]warning[/]: evaluating on the train split says little about held-out tasks")
    from ptrain.cli.rollout import run_rollout

    report = asyncio.run(run_rollout(Path(run), cfg, live=not as_json))
    result = evaluation(Path(run), cfg.taskpack, cfg.split)
    result["run"] = {"taskpack": cfg.taskpack, "split": cfg.split, "model": cfg.model,
                     "adapter": str(adapter) if adapter else None, "engine": cfg.engine, "samples": cfg.samples,
                     "temperature": cfg.temperature, "seed": cfg.seed, "time": time.time(),
                     "rollout": report.as_dict()}  # fmt: skip
    (Path(run) / EVAL_FILE).write_text(json.dumps(result, indent=1))
    if as_json:
        print(json.dumps(result, indent=1))
        return
    for table in summary_tables(result, Path(run)):
        output.console().print(table)


def evaluation(run: Path, taskpack: str | None = None, split: str | None = None) -> dict[str, Any]:
    """The summary of an evaluation run's store: pass@k, reward, breakdowns, and what was not scored."""
    census = Census()
    filters = {k: v for k, v in (("taskpack", taskpack), ("split", split)) if v}
    outcomes = task_outcomes(Store(run), census, **filters)
    return {
        "summary": summarize(outcomes),
        "census": {
            "episodes": census.episodes,
            "scored": census.scored,
            "unverified": census.unverified,
            "infra_errors": dict(census.infra_errors),
            "infra_retried": census.retried,
            "infra_error_rate": census.infra_error_rate,
            "pass@1_all": census.pass_at_1_all,  # infrastructure failures counted as 0
            "official": census.official_metrics(),  # the benchmark's own metric, where the verifier reports it
        },  # fmt: skip
    }


def merged_adapter(eval_run: Path, adapter: Path, model: str | None) -> Path:
    """The checkpoint (or a training run's latest) merged into a plain model, once, inside the eval run."""
    from ptrain.train.checkpoint import checkpoint_of
    from ptrain.train.model import export_merged

    checkpoint = checkpoint_of(adapter)
    key = hashlib.sha256(f"{checkpoint.resolve()}:{(checkpoint / 'state.json').stat().st_mtime_ns}".encode())
    out = eval_run / "model" / key.hexdigest()[:12]
    if not (out / "config.json").is_file():
        eval_run.mkdir(parents=True, exist_ok=True)
        export_merged(checkpoint, out, model)
    return out


def compare_runs(a: Path, b: Path) -> dict[str, Any]:
    for run in (a, b):
        if not (Path(run) / "episodes").is_dir():
            raise ConfigError(f"{run} holds no episodes", fix=f"ptrain eval {run} ... first")
    result = compare(task_outcomes(Store(a)), task_outcomes(Store(b)))
    result["a"], result["b"] = str(a), str(b)
    return result


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _ci(ci: list[float] | None, signed: bool = False) -> str:
    if not ci:
        return "-"
    f = "{:+.1f}" if signed else "{:.1f}"
    return f"[{f.format(100 * ci[0])}, {f.format(100 * ci[1])}]"


def summary_tables(result: dict[str, Any], run: Path) -> list[Table]:
    s, census = result["summary"], result["census"]
    ks = [key for key in s if key.startswith("pass@") and not key.endswith("ci95")]
    top = Table(title=f"evaluation: {run}")
    for name in ("tasks", "episodes", *ks, "mean reward", "tokens/task", "s/task"):
        top.add_column(name, justify="right")
    top.add_row(str(s["tasks"]), str(s["episodes"]), *[f"{_pct(s[k])} {_ci(s[k + '_ci95'])}" for k in ks],
                f"{s['mean_reward']:.3f}" if s["mean_reward"] is not None else "-",
                f"{s['tokens_per_task']:.0f}" if s["tokens_per_task"] is not None else "-",
                f"{s['seconds_per_task']:.1f}" if s["seconds_per_task"] is not None else "-")  # fmt: skip
    tables = [top]
    for key in ("by_category", "by_difficulty"):
        table = Table(title=key.replace("_", " "))
        for name in (key.removeprefix("by_"), "tasks", "pass@1 [95% CI]", "mean reward"):
            table.add_column(name, justify="left" if name == key.removeprefix("by_") else "right")
        for name, b in s[key].items():
            table.add_row(name or "-", str(b["tasks"]), f"{_pct(b['pass@1'])} {_ci(b['pass@1_ci95'])}",
                          f"{b['mean_reward']:.3f}")  # fmt: skip
        tables.append(table)
    console.print(f"pass@1 over all episodes (infrastructure failures as 0): {_pct(census.get('pass@1_all'))}; "
                  f"infrastructure error rate {_pct(census.get('infra_error_rate'))}"
                  + (f" ({census['infra_retried']} retried since)" if census.get("infra_retried") else ""))  # fmt: skip
    if s.get("actions_per_episode") is not None:
        console.print(f"tool calls before submit: {s['actions_per_episode']:.1f} an episode; "
                      f"submitted at once (no other call): {_pct(s['submitted_at_once'])}")  # fmt: skip
    for metric, m in census.get("official", {}).items():
        console.print(f"official metric {metric}: exact match {_pct(m['em'])}, F1 {_pct(m['f1'])} "
                      f"over {m['episodes']} episodes (the reward is ptrain's strict score)")  # fmt: skip
    if census["infra_errors"] or census["unverified"]:
        console.print(f"[yellow]not scored[/]: {census['unverified']} unverified episodes, infrastructure errors "
                      f"{census['infra_errors'] or 'none'} (re-run to retry, or `ptrain verify`)")  # fmt: skip
    return tables


def compare_table(result: dict[str, Any], a: Path, b: Path) -> Table:
    table = Table(title=f"B = {b}\nagainst A = {a}, paired on shared tasks")
    for name in ("", "tasks", "pass@1 A", "pass@1 B", "B - A [95% CI]", "McNemar p"):
        table.add_column(name, justify="left" if not name else "right", no_wrap=name.startswith("B - A"))
    rows = [("all", result), *((f"  {c or '-'}", r) for c, r in result["by_category"].items())]
    for name, r in rows:
        if not r["tasks"]:
            continue
        diff = "-" if r["pass@1_diff"] is None else f"{100 * r['pass@1_diff']:+.1f} {_ci(r['pass@1_diff_ci95'], True)}"
        table.add_row(name, str(r["tasks"]), _pct(r["pass@1_a"]), _pct(r["pass@1_b"]), diff, f"{r['mcnemar_p']:.3g}")
    return table
