"""`ptrain warmstart RUN --taskpack N`: a supervised warm start for any taskpack, in one resumable stage.

GRPO learns only from groups whose samples disagree, and a small base model fails every task of a new
taskpack, so online training from it has no signal. The warm start gives it some, from what every
taskpack already has:

1. gold demonstrations: the taskpack's gold tool calls replayed as the model's turns (`--engine
   gold`), each verified in a sandbox; the passed ones are the demonstrations   RUN/gold
2. SFT on them (LoRA), merged into a plain model                                RUN/gold-model
3. rejection sampling: that model's own episodes on train tasks, sampled at the
   rollout temperature and verified; the passed ones are its own successes      RUN/own
4. SFT again, from the step-2 adapter, on the gold and the own successes        RUN/own/train
5. the warm start, merged                                                       RUN/model

Own successes are in the model's own words and turn structure, so step 4 moves the model toward
what it can already do rather than toward a script it cannot follow; they also show it working
(tool calls before submit), where the check that matters is held out: `ptrain eval` of RUN/model
prints how often it submitted without any other call, a warm start that taught only "submit at
once" shows there. `--own-tasks 0` stops after step 2 (RUN/model is then the step-2 model).

Every step resumes: the rollouts skip what their store holds, the trainers resume from their
checkpoints, and an export already written is kept. RUN/warmstart.json holds the counts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections import Counter
from pathlib import Path

import typer
from rich.console import Console

from ptrain.cli.rollout import run_rollout
from ptrain.cli.train import export, run_training, setup_logging
from ptrain.errors import ConfigError
from ptrain.rollout.config import RolloutConfig, load_config
from ptrain.store import Store
from ptrain.taskpack import load as load_taskpack
from ptrain.train.config import load_train_config
from ptrain.verify import select_tasks

console = Console()


def warmstart(
    run: Path = typer.Argument(..., help="The warm start's directory (created if missing)."),
    taskpack: str = typer.Option(..., help="The taskpack whose gold solutions and train tasks to use."),
    config: Path = typer.Option(None, "--config", help="A rollout TOML (turns, tokens, sandboxes) for both rollouts."),
    category: str = typer.Option(None, help="Only tasks of these categories, comma-separated."),
    difficulty: str = typer.Option(None, help="Only these difficulty tiers, comma-separated (e.g. easy)."),
    demos: int = typer.Option(128, help="Train tasks whose gold solutions are rolled out."),
    own_tasks: int = typer.Option(64, "--own-tasks", help="Train tasks the step-2 model samples (0: no step 3-4)."),
    own_samples: int = typer.Option(4, "--own-samples", help="Samples per task in rejection sampling."),
    temperature: float = typer.Option(1.0, help="Rejection sampling's temperature."),
    max_turns: int = typer.Option(None, "--max-turns"),
    max_new_tokens: int = typer.Option(None, "--max-new-tokens"),
    concurrency: int = typer.Option(None, help="Episodes in flight  [default: 8]"),
    model: str = typer.Option(None, help="The model to warm-start  [default: smollm2-135m]"),
    epochs: int = typer.Option(4, help="SFT epochs over the gold demonstrations."),
    own_epochs: int = typer.Option(2, "--own-epochs", help="SFT epochs over gold and own successes (step 4)."),
    lora_rank: int = typer.Option(16, "--lora-rank"),
    lr: float = typer.Option(1e-3, help="SFT learning rate (LoRA; few steps on few demonstrations)."),
    groups_per_step: int = typer.Option(16, "--groups-per-step", help="Episodes per SFT step."),
    dtype: str = typer.Option(None, help="SFT's compute dtype: float32, bfloat16 (faster on CPUs with bf16), auto"),
    seed: int = typer.Option(0),
) -> None:
    """Gold demonstrations, SFT, rejection sampling of the model's own successes, SFT again: a warm start."""
    setup_logging()
    split = lambda text: tuple(t for t in text.split(",") if t) if text else None  # noqa: E731
    rollout = load_config(config, taskpack=taskpack, split="train", categories=split(category),
                          difficulties=split(difficulty), max_turns=max_turns, max_new_tokens=max_new_tokens,
                          concurrency=concurrency, seed=seed, **({"model": model} if model else {}))  # fmt: skip
    if rollout.split != "train":
        raise ConfigError(
            f"a warm start learns from train tasks, not {rollout.split!r}", fix="drop split from the config"
        )
    train = load_train_config(None, algo="sft", taskpack=taskpack, model=rollout.model, epochs=epochs,
                              lora_rank=lora_rank, lr=lr, groups_per_step=groups_per_step, save_every=4, seed=seed,
                              dtype=dtype)  # fmt: skip
    run.mkdir(parents=True, exist_ok=True)
    gold, gold_model, own, final = run / "gold", run / "gold-model", run / "own", run / "model"

    console.rule("1. gold demonstrations")
    asyncio.run(run_rollout(gold, dataclasses.replace(rollout, engine="gold", samples=1, **sample_of(rollout, demos))))
    passed = list(Store(gold).episodes(min_reward=1.0))
    if not passed:
        raise ConfigError(f"no gold demonstration of {taskpack} passed in {gold}",
                          fix=f"ptrain taskpacks check {taskpack} --require-gold shows which gold fails")  # fmt: skip
    console.rule(f"2. SFT on {len(passed)} demonstrations")
    run_training(gold, train)
    exported(gold, gold_model)
    counts: dict = {"taskpack": taskpack, "gold_episodes": len(list(Store(gold).episodes())), "demos": len(passed)}
    if own_tasks > 0:
        console.rule(f"3. rejection sampling: {own_tasks} tasks x {own_samples} from {gold_model}")
        sampled = dataclasses.replace(rollout, model=str(gold_model), samples=own_samples, **sample_of(rollout, own_tasks),
                                      temperature=temperature)  # fmt: skip
        asyncio.run(run_rollout(own, sampled))
        counts.update(own_successes(Store(own)))
        console.rule(f"4. SFT on the demonstrations and {counts['own_passed']} own successes")
        again = dataclasses.replace(train, init=str(gold), demos=(str(gold),), epochs=own_epochs)
        run_training(own, again)
        exported(own, final)
    else:
        exported(gold, final)
    (run / "warmstart.json").write_text(json.dumps(counts, indent=1) + "\n")
    console.print(counts)
    console.print(f"[green]warm start[/]: {final} (evaluate it: ptrain eval DIR --model {final} --split test ...)")


def sample_of(rollout: RolloutConfig, n: int) -> dict:
    """`n` tasks of the rollout's: a fixed sample of the split, or of its `task_ids` when it names them
    (a rollout runs every named task, so the sample is drawn here, by the same seeded draw)."""
    if not rollout.task_ids:
        return {"tasks": n}
    pack = load_taskpack(rollout.taskpack)
    chosen = select_tasks(pack, [rollout.split], rollout.task_ids, n, rollout.seed)
    return {"task_ids": tuple(sorted(task.id for task in chosen)), "tasks": None}


def own_successes(store: Store) -> dict:
    """What rejection sampling found: episodes, passes, tasks with one pass at least, per tier."""
    episodes = list(store.episodes())
    rewards = {v.episode_id: v.passed for v in store.latest_verdicts().values()}
    ok = [e for e in episodes if rewards.get(e.episode_id)]
    by_tier = Counter(str(e.metadata.get("difficulty", "")) for e in ok)
    return {"own_episodes": len(episodes), "own_passed": len(ok), "own_tasks_passed": len({e.task_id for e in ok}),
            "own_passed_by_tier": dict(sorted(by_tier.items()))}  # fmt: skip


def exported(run: Path, out: Path) -> None:
    """The run's latest checkpoint merged into `out`, unless a finished export is already there."""
    if not (out / "config.json").is_file():
        export(run, out, None)
