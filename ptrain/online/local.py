"""Online rounds in this process: the `hf` engine samples from the trainer's own weights.

The engine is built on the trainer's peft model object itself: no weight copies, no adapter
reloads; after each step the engine's prefix cache is dropped and its policy version bumped. A round
whose groups carry no signal (every sample passed, or every one failed) takes no step and says so.

Dynamic sampling (DAPO; `dynamic_sampling = N` in the train config): a round whose groups with
signal are fewer than `groups_per_step` rolls out fresh tasks in their place, up to N more times,
and trains on at most `groups_per_step` groups with signal. The fresh tasks of refill j of round r
are drawn by (seed, r, j), so a resumed round draws the same ones and reuses their stored episodes.

The curriculum (`curriculum = true`; online/curriculum.py) picks each round's tasks, and a refill's,
by the running pass-rate estimates and the unlocked tiers instead of walking the shuffled pool; it is
rebuilt from the store when a run resumes, and each round's summary carries its tier and skips.

`minutes` (`--minutes`) bounds the run: a round starts only if, as long as the longest so far, it would
end in time (rounds.py's RoundClock). Stopped by Ctrl-C or SIGINT during a training step, the step
finishes and is checkpointed before the process stops; during a rollout, it stops at once.

Stopped or killed, the same command resumes: the checkpoint holds the round and step; a round's
episodes are keyed by (task, policy version), so a round redone after a crash reuses what the store
already holds and trains on exactly the groups it trained on before.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time

from ptrain.engine.hf import HFEngine
from ptrain.online import memory
from ptrain.online.curriculum import Curriculum, rebuilt
from ptrain.online.rounds import RoundClock, end_round, kept_step, refill_tasks, round_tasks, select_round
from ptrain.rollout.chat import ChatFormat
from ptrain.rollout.config import RolloutConfig
from ptrain.rollout.scheduler import Rollout
from ptrain.sandbox import PoolSet, runtime
from ptrain.sandbox.container import SandboxLimits
from ptrain.store import Store
from ptrain.train.loop import Trainer

log = logging.getLogger("ptrain.train")


async def train_local(trainer: Trainer, store: Store, pack, rollout: RolloutConfig, rounds: int, order: list[str],
                      engine=None, clock: RoundClock | None = None) -> list[dict]:  # fmt: skip
    """`rounds` rounds (fewer if resuming, or if `clock` runs out) with sandboxes and an engine in this process;
    each round's summary."""
    cfg = trainer.cfg
    clock = clock or RoundClock(cfg.minutes)
    runtime.ensure_service()
    engine = engine or HFEngine(trainer.model, name=cfg.model, policy_version=trainer.policy_version,
                                seed=rollout.seed, max_batch=rollout.max_batch,
                                kv_budget_tokens=rollout.kv_budget_tokens or None,
                                threads=rollout.engine_threads or None)  # fmt: skip
    fmt = ChatFormat(trainer.tokenizer, rollout.action_format, tool_listing=rollout.tool_listing)
    limits = SandboxLimits(memory_mb=rollout.sandbox_memory_mb, cpus=rollout.sandbox_cpus,
                           cpuset=rollout.sandbox_cpuset,
                           artifact_max_mb=rollout.artifact_max_mb)  # fmt: skip
    curriculum = None
    if cfg.curriculum:
        pool = [task for task in pack.tasks(rollout.split) if task.id in set(order)]
        older = store.groups(taskpack=pack.name, task_id=order, max_policy_version=trainer.policy_version - 1)
        curriculum = rebuilt(Curriculum(pool, seed=cfg.seed), older)
    rows = []
    try:
        async with PoolSet(size=min(rollout.concurrency, 8), max_active=rollout.concurrency + rollout.verify_concurrency,
                           limits=limits) as pools:  # fmt: skip
            while trainer.round < rounds:
                if not clock.next_fits():
                    log.info(clock.stop_line(len(rows)))
                    if trainer.round % cfg.save_every:  # the last round's checkpoint was not due
                        trainer.save()
                    break
                started = time.monotonic()
                rows.append(await one_round(trainer, engine, store, pack, fmt, pools, rollout, order, curriculum))
                clock.took(time.monotonic() - started)
    finally:
        await engine.close()
    return rows


async def one_round(trainer: Trainer, engine: HFEngine, store: Store, pack, fmt, pools, rollout, order,
                    curriculum: Curriculum | None = None) -> dict:  # fmt: skip
    r, version, k = trainer.round, trainer.policy_version, trainer.cfg.groups_per_step
    ids = curriculum.pick(k, r) if curriculum else round_tasks(k, r, order)
    started = time.monotonic()
    await Rollout(dataclasses.replace(rollout, task_ids=ids, tasks=None), store, pack, engine, fmt, pools).run()
    oldest = version - trainer.cfg.max_staleness if trainer.cfg.max_staleness >= 0 else version
    groups, selection, summary = select_round(trainer, store, pack, ids, oldest, time.monotonic() - started)
    refills = 0
    while len(selection.groups) < k and refills < trainer.cfg.dynamic_sampling:
        n = k - len(selection.groups)
        fresh = (curriculum.pick(n, r, exclude=ids, refill=refills) if curriculum
                 else refill_tasks(n, r, refills, order, ids, trainer.cfg.seed))  # fmt: skip
        if not fresh:
            break
        refills, ids = refills + 1, ids + fresh
        await Rollout(dataclasses.replace(rollout, task_ids=fresh, tasks=None), store, pack, engine, fmt, pools).run()
        groups, selection, summary = select_round(trainer, store, pack, ids, oldest, time.monotonic() - started)
    if refills:
        selection.groups = selection.groups[:k]
        summary.update(refills=refills, tasks=len(ids), groups_with_signal=len(selection.groups))
    if curriculum:
        for group in store.groups(taskpack=pack.name, task_id=list(ids), min_policy_version=version,
                                  max_policy_version=version):  # fmt: skip
            curriculum.observe(group.task_id, [v.reward for v in group.verdicts if v is not None], version)
        summary["curriculum"] = curriculum.snapshot()
    stopped = None
    if selection.groups:
        step_started = time.monotonic()
        with engine.paused() if hasattr(engine, "paused") else contextlib.nullcontext():
            row, stopped = await kept_step(trainer, selection)
            trainer.model.eval()
            engine.policy_version = trainer.policy_version
        summary.update(
            stepped=True, loss=row["loss"], grad_norm=row["grad_norm"], train_s=time.monotonic() - step_started
        )
    summary.update(memory.release())  # after a step the prefix cache is cleared: its pages go back
    summary = end_round(trainer, summary, groups, save=stopped is not None)
    if stopped is not None:
        raise stopped
    return summary
