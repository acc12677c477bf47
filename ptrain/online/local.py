"""Online GRPO: rounds of rollout then one training step, the engine sampling from the trainer's own weights.

    round r:  tasks r*k .. r*k+k-1 of the (shuffled) task pool
              -> rollout G samples each with the in-process engine at policy version v  (store)
              -> verify                                                                 (store)
              -> one GRPO step on those groups, generation paused                       -> version v+1

The `hf` engine is built on the trainer's peft model object itself: no weight copies, no adapter
reloads; after each step the engine's prefix cache is dropped and its policy version bumped. A round
whose groups carry no signal (every sample passed, or every one failed) takes no step and says so.

Dynamic sampling (DAPO; `dynamic_sampling = N` in the train config): a round whose groups with
signal are fewer than `groups_per_step` rolls out fresh tasks in their place, up to N more times,
and trains on at most `groups_per_step` groups with signal. The fresh tasks of refill j of round r
are drawn by (seed, r, j), so a resumed round draws the same ones and reuses their stored episodes.

Stopped or killed, the same command resumes: the checkpoint holds the round and step; a round's
episodes are keyed by (task, policy version), so a round redone after a crash reuses what the store
already holds and trains on exactly the groups it trained on before.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import random
import time
from pathlib import Path

from ptrain.engine.hf import HFEngine
from ptrain.errors import ConfigError
from ptrain.rollout.chat import ChatFormat, resolve_action_format
from ptrain.rollout.config import RolloutConfig
from ptrain.rollout.scheduler import Rollout
from ptrain.sandbox import PoolSet, runtime
from ptrain.sandbox.container import SandboxLimits
from ptrain.store import Store
from ptrain.taskpack import load as load_taskpack
from ptrain.train.batch import select_grpo
from ptrain.train.config import TrainConfig
from ptrain.train.loop import Trainer, TrainError
from ptrain.verify import select_tasks

log = logging.getLogger("ptrain.train")


async def train_online(run: Path, cfg: TrainConfig, rollout: RolloutConfig, rounds: int, engine=None) -> list[dict]:
    """`rounds` rounds of rollout + one step (fewer if resuming); returns each round's summary.

    `engine` replaces the in-process engine on the trainer's weights (tests use a scripted policy)."""
    store = Store(run, create=True)
    pack = load_taskpack(rollout.taskpack)
    rollout = dataclasses.replace(rollout, action_format=resolve_action_format(rollout.action_format, pack.tools()))
    if rollout.ray and cfg.dynamic_sampling:
        raise ConfigError("dynamic_sampling runs in local online training only, not on Ray (yet)",
                          fix="set dynamic_sampling = 0, or train without --ray")  # fmt: skip
    trainer = Trainer(cfg, run)
    trainer.start(rounds)
    order = task_order(pack, rollout)
    if rollout.ray:
        from ptrain.scale.online import train_on_fleet

        return await train_on_fleet(trainer, store, pack, rollout, rounds, order)
    runtime.ensure_service()
    engine = engine or HFEngine(trainer.model, name=cfg.model, policy_version=trainer.policy_version,
                                seed=rollout.seed, max_batch=rollout.max_batch,
                                kv_budget_tokens=rollout.kv_budget_tokens or None,
                                threads=rollout.engine_threads or None)  # fmt: skip
    fmt = ChatFormat(trainer.tokenizer, rollout.action_format)
    limits = SandboxLimits(memory_mb=rollout.sandbox_memory_mb, cpus=rollout.sandbox_cpus,
                           cpuset=rollout.sandbox_cpuset,
                           artifact_max_mb=rollout.artifact_max_mb)  # fmt: skip
    rows = []
    try:
        async with PoolSet(size=min(rollout.concurrency, 8), max_active=rollout.concurrency + rollout.verify_concurrency,
                           limits=limits) as pools:  # fmt: skip
            while trainer.round < rounds:
                rows.append(await one_round(trainer, engine, store, pack, fmt, pools, rollout, order))
    finally:
        await engine.close()
    return rows


async def one_round(trainer: Trainer, engine: HFEngine, store: Store, pack, fmt, pools, rollout, order) -> dict:
    r, version, k = trainer.round, trainer.policy_version, trainer.cfg.groups_per_step
    ids = round_tasks(k, r, order)
    started = time.monotonic()
    report = await Rollout(dataclasses.replace(rollout, task_ids=ids, tasks=None), store, pack, engine, fmt,
                           pools).run()  # fmt: skip
    oldest = version - trainer.cfg.max_staleness if trainer.cfg.max_staleness >= 0 else version
    groups, selection, summary = select_round(trainer, store, pack, ids, oldest, report, time.monotonic() - started)
    refills = 0
    while len(selection.groups) < k and refills < trainer.cfg.dynamic_sampling:
        fresh = refill_tasks(k - len(selection.groups), r, refills, order, ids, trainer.cfg.seed)
        if not fresh:
            break
        refills, ids = refills + 1, ids + fresh
        more = await Rollout(dataclasses.replace(rollout, task_ids=fresh, tasks=None), store, pack, engine, fmt,
                             pools).run()  # fmt: skip
        report.passed, report.verified = report.passed + more.passed, report.verified + more.verified
        groups, selection, summary = select_round(trainer, store, pack, ids, oldest, report,
                                                  time.monotonic() - started)  # fmt: skip
    if refills:
        selection.groups = selection.groups[:k]
        summary.update(refills=refills, tasks=len(ids), groups_with_signal=len(selection.groups))
    if selection.groups:
        step_started = time.monotonic()
        with engine.paused() if hasattr(engine, "paused") else contextlib.nullcontext():
            row = await asyncio.to_thread(trainer.step, selection.groups, [selection])
            trainer.model.eval()
            engine.policy_version = trainer.policy_version
        summary.update(
            stepped=True, loss=row["loss"], grad_norm=row["grad_norm"], train_s=time.monotonic() - step_started
        )
    return end_round(trainer, summary, groups)


def select_round(trainer: Trainer, store: Store, pack, ids: tuple[str, ...], oldest: int, report, rollout_s: float):
    """The round's stored groups from `oldest` to the trainer's version, GRPO's selection of them, and the
    round's summary so far; says so when no group has signal (no step this round)."""
    r, version = trainer.round, trainer.policy_version
    groups = list(store.groups(taskpack=pack.name, task_id=list(ids), min_policy_version=oldest,
                               max_policy_version=version))  # fmt: skip
    selection = select_grpo(groups, trainer.cfg.advantage, oldest, trainer.cfg.mask_truncated)
    summary = {"round": r + 1, "policy_version": version, "tasks": len(ids), "episodes": selection.episodes,
               "reward_mean": sum(selection.rewards) / len(selection.rewards) if selection.rewards else None,
               "pass_rate": report.passed / max(report.verified, 1), "groups_with_signal": len(selection.groups),
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


def end_round(trainer: Trainer, summary: dict, groups: int) -> dict:
    """Count the round, checkpoint when due, and append its summary to metrics/online.jsonl."""
    trainer.round += 1
    if trainer.round % trainer.cfg.save_every == 0 or trainer.round == trainer.total_steps:
        trainer.save()
    if trainer.rank == 0:
        (trainer.run / "metrics").mkdir(parents=True, exist_ok=True)
        with (trainer.run / "metrics" / "online.jsonl").open("a") as f:
            f.write(json.dumps({**summary, "time": time.time()}) + "\n")
    log.info("round %d: reward %s, pass %.2f, %d/%d groups with signal%s", summary["round"],
             "-" if summary["reward_mean"] is None else f"{summary['reward_mean']:.3f}", summary["pass_rate"],
             summary["groups_with_signal"], groups, f", loss {summary['loss']:.4f}" if summary["stepped"] else "")  # fmt: skip
    return summary


def online_rollout_config(cfg: TrainConfig, path: Path | None = None, **overrides) -> RolloutConfig:
    """The rollout half of an online run: the train config's taskpack, split and model, then the file and flags."""
    from ptrain.rollout.config import load_config

    base = {"taskpack": cfg.taskpack or None, "split": cfg.split, "model": cfg.model}
    return load_config(path, **{**base, **{k: v for k, v in overrides.items() if v is not None}})
