"""What a round of online training is, whether it runs here or on Ray.

Which tasks round r takes (`round_tasks`, and dynamic sampling's `refill_tasks`), which stored
groups it trains on and its summary (`select_round`), and its end: counted, checkpointed when due
and appended to RUN/metrics/online.jsonl (`end_round`), its step kept when a stop comes mid-step
(`kept_step`), and the time limit (`RoundClock`). Pure bookkeeping over the store and the
trainer: no engine, no sandbox, no Ray.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from pathlib import Path

from ptrain.rollout.config import RolloutConfig
from ptrain.store import Store
from ptrain.train.batch import select_grpo
from ptrain.train.config import TrainConfig
from ptrain.train.loop import Trainer, TrainError
from ptrain.verify import select_tasks

log = logging.getLogger("ptrain.train")


def select_round(trainer: Trainer, store: Store, pack, ids: tuple[str, ...], oldest: int, rollout_s: float):
    """The round's stored groups from `oldest` to the trainer's version, GRPO's selection of them, and the
    round's summary so far; says so when no group has signal (no step this round). The pass rate is the
    stored verdicts', so a round resumed from episodes an earlier process rolled reports theirs."""
    r, version = trainer.round, trainer.policy_version
    groups = list(store.groups(taskpack=pack.name, task_id=list(ids), min_policy_version=oldest,
                               max_policy_version=version))  # fmt: skip
    selection = select_grpo(groups, trainer.cfg.advantage, oldest, trainer.cfg.mask_truncated)
    passed = [v.passed for group in groups for v in group.verdicts if v is not None]
    summary = {"round": r + 1, "policy_version": version, "tasks": len(ids), "episodes": selection.episodes,
               "reward_mean": sum(selection.rewards) / len(selection.rewards) if selection.rewards else None,
               "pass_rate": sum(passed) / len(passed) if passed else None, "groups_with_signal": len(selection.groups),
               "dropped": dict(selection.dropped), "rollout_s": rollout_s, "stepped": False}  # fmt: skip
    if not selection.groups:
        log.warning("round %d: no group has signal (%s); no training step this round", r + 1,
                    ", ".join(f"{n} {why}" for why, n in selection.dropped.items()) or "no groups")  # fmt: skip
    return len(groups), selection, summary


def round_tasks(k: int, r: int, order: list[str]) -> tuple[str, ...]:
    """The tasks of round `r`: the next `k` (groups per step) of the shuffled pool."""
    return tuple(dict.fromkeys(order[(r * k + i) % len(order)] for i in range(k)))


def refill_tasks(n: int, r: int, j: int, order: list[str], taken: tuple[str, ...], seed: int) -> tuple[str, ...]:
    """Dynamic sampling's refill j of round r: `n` tasks of the pool not yet in the round, drawn by (seed, r, j)."""
    left = sorted(set(order) - set(taken))
    return tuple(random.Random(f"{seed}:{r}:{j}").sample(left, min(n, len(left))))


def task_order(pack, rollout: RolloutConfig) -> list[str]:
    """The online run's task pool, shuffled once by the seed: rounds walk through it in this order."""
    pool = select_tasks(pack, [rollout.split], rollout.task_ids, rollout.tasks, rollout.seed,
                        rollout.categories, rollout.difficulties)  # fmt: skip
    if not pool:
        raise TrainError(f"no {rollout.split} tasks in {pack.name} match {rollout.categories or ''} "
                         f"{rollout.difficulties or ''}", fix="check --taskpack, --split and the task filters")  # fmt: skip
    order = sorted(task.id for task in pool)
    random.Random(rollout.seed).shuffle(order)
    return order


def end_round(trainer: Trainer, summary: dict, groups: int, save: bool = False) -> dict:
    """Count the round, checkpoint when due (or `save`), and append its summary to metrics/online.jsonl."""
    trainer.round += 1
    if save or trainer.round % trainer.cfg.save_every == 0 or trainer.round == trainer.total_steps:
        trainer.save()
    if trainer.rank == 0:
        (trainer.run / "metrics").mkdir(parents=True, exist_ok=True)
        with (trainer.run / "metrics" / "online.jsonl").open("a") as f:
            f.write(json.dumps({**summary, "time": time.time()}) + "\n")
    log.info("round %d: reward %s, pass %s, %d/%d groups with signal%s", summary["round"],
             "-" if summary["reward_mean"] is None else f"{summary['reward_mean']:.3f}",
             "-" if summary["pass_rate"] is None else f"{summary['pass_rate']:.2f}",
             summary["groups_with_signal"], groups, f", loss {summary['loss']:.4f}" if summary["stepped"] else "")  # fmt: skip
    if "curriculum" in summary:
        log.info("curriculum: %s", curriculum_line(summary))
    return summary


async def kept_step(trainer: Trainer, selection) -> tuple[dict, BaseException | None]:
    """The round's training step, in a thread. Cancelled (Ctrl-C, SIGINT) while it runs, the step still
    finishes: returns its row and the cancellation, for the caller to re-raise once the round is checkpointed."""
    step = asyncio.ensure_future(asyncio.to_thread(trainer.step, selection.groups, [selection]))
    try:
        return await asyncio.shield(step), None
    except asyncio.CancelledError as e:
        log.warning("stopping: round %d's training step finishes and is checkpointed first", trainer.round + 1)
        return await step, e


class RoundClock:
    """Online training's time limit (`minutes`, counted from `started`): a round starts only if it would
    end in time, taking it to be as long as the longest round so far; the first round always starts.
    Stopping at a round boundary keeps every round's work (a SIGINT at a deadline cuts one short)."""

    def __init__(self, minutes: float, started: float | None = None):
        self.limit_s, self.started, self.longest = minutes * 60, started or time.monotonic(), 0.0

    def next_fits(self) -> bool:
        return not self.limit_s or not self.longest or self.elapsed() + self.longest <= self.limit_s

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def took(self, seconds: float) -> None:
        self.longest = max(self.longest, seconds)

    def stop_line(self, rounds: int) -> str:
        return (f"time limit: {rounds} rounds in {self.elapsed() / 60:.1f} min; another (up to {self.longest:.0f} s) "
                f"would end past {self.limit_s / 60:.1f} min")  # fmt: skip


def curriculum_line(summary: dict) -> str:
    """The round's curriculum in one line: the open tier, each tier's mean estimate, skips and refills."""
    snap = summary["curriculum"]
    rate = lambda t: "-" if t["pass_rate"] is None else f"{t['pass_rate']:.2f}"  # noqa: E731
    tiers = ", ".join(f"{tier} {rate(t)} ({t['seen']} seen)" for tier, t in snap["tiers"].items())
    skipped = ", ".join(f"{n} {why}" for why, n in sorted(snap["skipped"].items())) or "none"
    refills = f"; {summary['refills']} refills" if summary.get("refills") else ""
    climbed = ", ".join(f"{c} {tier}" for c, tier in snap.get("climbed", {}).items())
    return f"tier {snap['tier']} open{f' ({climbed})' if climbed else ''}; {tiers}; skipped {skipped}{refills}"


def online_rollout_config(cfg: TrainConfig, path: Path | None = None, **overrides) -> RolloutConfig:
    """The rollout half of an online run: the train config's taskpack, split and model, then the file and flags."""
    from ptrain.rollout.config import load_config

    base = {"taskpack": cfg.taskpack or None, "split": cfg.split, "model": cfg.model}
    return load_config(path, **{**base, **{k: v for k, v in overrides.items() if v is not None}})
