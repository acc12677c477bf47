"""`ptrain train RUN`: GRPO (or SFT) from the run's store; `ptrain train export RUN --out DIR`: a merged model.

Several processes: `torchrun --nproc_per_node N $(which ptrain) train RUN ...` (gloo on CPU, NCCL on
GPUs). Stopped or killed, the same command resumes from the latest checkpoint, exactly.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import typer
from rich.console import Console
from rich.logging import RichHandler
from rich.table import Table

from ptrain.errors import ConfigError
from ptrain.store import Store
from ptrain.train.config import TrainConfig, load_train_config

console = Console()


def train(
    run: str = typer.Argument(..., help="The run directory; or `export` followed by the run directory."),
    export_run: Path = typer.Argument(
        None, help="With `export`: the run whose checkpoint to export.", show_default=False
    ),
    out: Path = typer.Option(None, "--out", help="export: where to write the merged checkpoint."),
    checkpoint: Path = typer.Option(None, "--checkpoint", help="export: this checkpoint  [default: the latest]"),
    config: Path = typer.Option(None, "--config", help="A TOML file with any TrainConfig keys; flags override it."),
    algo: str = typer.Option(None, help="grpo, or sft (supervised on passed episodes)  [default: grpo]"),
    trainer: str = typer.Option(None, help="ptrain, or trl (TRL's GRPOTrainer)  [default: ptrain]"),
    model: str = typer.Option(None, help="Packaged model name or checkpoint directory  [default: smollm2-135m]"),
    init: str = typer.Option(None, help="Start from this checkpoint's adapter (e.g. an SFT warm start)."),
    demos: list[str] = typer.Option(None, "--demos", help="sft: also this run's passed episodes (repeatable)."),
    split: str = typer.Option(None, help="[default: train]"),
    taskpack: str = typer.Option(None, help="Only this taskpack's episodes  [default: all]"),
    lora: bool = typer.Option(None, "--lora/--full", help="LoRA (default) or full fine-tuning."),
    lora_rank: int = typer.Option(None, "--lora-rank"),
    lr: float = typer.Option(None, help="[default: 2e-5 GRPO, 1e-4 SFT with LoRA; a tenth without]"),
    groups_per_step: int = typer.Option(None, "--groups-per-step", help="Groups per optimizer step  [default: 8]"),
    micro_batch_tokens: int = typer.Option(None, "--micro-batch-tokens", help="[default: 4096]"),
    epochs: int = typer.Option(None),
    max_steps: int = typer.Option(None, "--max-steps"),
    save_every: int = typer.Option(None, "--save-every", help="Steps between checkpoints  [default: 10]"),
    device: str = typer.Option(None, help="cpu, cuda or auto"),
    dtype: str = typer.Option(
        None, help="compute dtype: float32, bfloat16, or auto (bfloat16 on a GPU); weights stay float32"
    ),
    strategy: str = typer.Option(None, help="ddp (a replica per process) or fsdp (FSDP2 shards)  [default: ddp]"),
    seed: int = typer.Option(None),
    online: bool = typer.Option(False, "--online", help="Alternate rollout and training (needs --taskpack)."),
    rounds: int = typer.Option(20, help="online: rollout-then-train rounds (one step each)."),
    minutes: float = typer.Option(
        None, help="online: start no round that would end past this many minutes (stops at a round boundary)."
    ),
    rollout_config: Path = typer.Option(None, "--rollout-config", help="online: a TOML file of rollout keys."),
    samples: int = typer.Option(None, help="online: samples per task (the group size)  [default: 4]"),
    difficulty: str = typer.Option(None, help="online: only these difficulty tiers, comma-separated (e.g. easy)."),
    category: str = typer.Option(None, help="online: only these task categories, comma-separated."),
    concurrency: int = typer.Option(None, help="online: episodes in flight  [default: 8]"),
    max_turns: int = typer.Option(None, "--max-turns", help="online: per episode  [default: 20]"),
    max_new_tokens: int = typer.Option(None, "--max-new-tokens", help="online: per model turn  [default: 512]"),
    temperature: float = typer.Option(None, help="online: sampling temperature  [default: 1.0]"),
    top_p: float = typer.Option(None, help="online: nucleus sampling, renormalised (and scored so)  [default: 1.0]"),
    ray: str = typer.Option(None, "--ray", help="online: roll out on Ray workers at this cluster address."),
    workers: int = typer.Option(None, help="online with --ray: rollout workers  [default: 1 per node]"),
) -> None:
    """Train the policy on the run's stored groups; re-run the same command to resume."""
    setup_logging()
    if run == "export":
        if export_run is None or out is None:
            raise ConfigError("usage: ptrain train export RUN --out DIR [--checkpoint CKPT]")
        export(export_run, out, checkpoint)
        return
    if export_run is not None:
        raise ConfigError(f"unexpected argument {export_run}", fix="ptrain train RUN [OPTIONS]")
    cfg = load_train_config(config, algo=algo, trainer=trainer, model=model, init=init, split=split,
                            demos=tuple(demos) if demos else None,
                            taskpack=taskpack, lora=lora, lora_rank=lora_rank, lr=lr, groups_per_step=groups_per_step,
                            micro_batch_tokens=micro_batch_tokens, epochs=epochs, max_steps=max_steps,
                            save_every=save_every, device=device, dtype=dtype, strategy=strategy,
                            seed=seed, minutes=minutes)  # fmt: skip
    if online:
        import asyncio

        from ptrain.online import train_online
        from ptrain.online.rounds import online_rollout_config

        if not cfg.taskpack:
            raise ConfigError("--online needs --taskpack NAME (the tasks to roll out)")
        split_list = lambda text: tuple(t for t in text.split(",") if t) if text else None  # noqa: E731
        rcfg = online_rollout_config(cfg, rollout_config, samples=samples, difficulties=split_list(difficulty),
                                     categories=split_list(category), concurrency=concurrency, max_turns=max_turns,
                                     max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p, ray=ray,
                                     workers=workers)  # fmt: skip
        summaries = asyncio.run(train_online(Path(run), cfg, rcfg, rounds))
        console.print(online_table(summaries))
        return
    rows = run_training(Path(run), cfg)
    if rows:
        console.print(summary_table(rows))


def run_training(run: Path, cfg: TrainConfig) -> list[dict]:
    from ptrain.train.loop import Trainer

    store = Store(run)
    if cfg.trainer == "trl":
        from ptrain.train.trl_backend import train_with_trl

        return train_with_trl(run, store, cfg)
    trainer = Trainer(cfg, run)
    rows = trainer.train(store)
    if trainer.rank != 0:
        return []
    if not rows:
        console.print(f"[green]nothing left to do[/]: training already reached step {trainer.step_no}")
    return rows


def export(run: Path, out: Path, checkpoint: Path | None) -> None:
    from ptrain.train.checkpoint import checkpoint_of
    from ptrain.train.model import export_merged

    checkpoint = checkpoint_of(checkpoint or run)
    export_merged(checkpoint, out)
    console.print(f"[green]exported[/] {checkpoint} → {out} (load it with AutoModelForCausalLM.from_pretrained)")


def summary_table(rows: list[dict]) -> Table:
    table = Table(title=f"training: {len(rows)} steps")
    for name in ("step", "loss", "reward", "grad norm", "tokens/s", "left out"):
        table.add_column(name, justify="right" if name != "left out" else "left")
    for row in rows[-10:]:
        reward = "-" if row["reward_mean"] is None else f"{row['reward_mean']:.3f}"
        dropped = ", ".join(f"{n} {why}" for why, n in row["dropped"].items())
        table.add_row(str(row["step"]), f"{row['loss']:.4f}", reward, f"{row['grad_norm']:.3f}",
                      f"{row['tokens_per_s']:.0f}", dropped)  # fmt: skip
    return table


def online_table(rows: list[dict]) -> Table:
    table = Table(title=f"online training: {len(rows)} rounds")
    tiered = any("curriculum" in row for row in rows)  # the curriculum's open tier, per round
    for name in ("round", "version", "reward", "pass rate", "groups with signal", "loss", "rollout s"):
        table.add_column(name, justify="right")
    if tiered:
        table.add_column("tier")
    for row in rows[-20:]:
        reward = "-" if row["reward_mean"] is None else f"{row['reward_mean']:.3f}"
        loss = f"{row['loss']:.4f}" if row["stepped"] else "no step"
        rate = "-" if row["pass_rate"] is None else f"{row['pass_rate']:.2f}"
        cells = [str(row["round"]), str(row["policy_version"]), reward, rate,
                 f"{row['groups_with_signal']}/{row['tasks']}", loss, f"{row['rollout_s']:.0f}"]  # fmt: skip
        table.add_row(*cells, *([row.get("curriculum", {}).get("tier", "-")] if tiered else []))
    return table


def setup_logging() -> None:
    """INFO from the first process only (torchrun starts several); of the libraries' records only errors
    (urllib3's "connection pool is full", say, is about its pool, not the run)."""
    level = logging.INFO if os.environ.get("RANK", "0") == "0" else logging.WARNING
    handler = RichHandler(console=console, show_path=False)
    handler.addFilter(lambda record: record.name.startswith("ptrain") or record.levelno >= logging.ERROR)
    logging.basicConfig(level=level, format="%(message)s", handlers=[handler])
