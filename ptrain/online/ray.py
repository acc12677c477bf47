"""Online GRPO with the trainer here and the rollouts on Ray workers (`ptrain train --online --ray ...`).

    round r:  workers roll out round r's groups  ─┐ (already started during round r-1's step)
              workers start round r+1's groups    ├─ the trainer steps on round r's groups -> v+1
              the new weights go to every worker ─┘ between two decode steps, rollouts going on

Each worker's engine holds the base model; after every step the trainer's LoRA adapter (or, with
full fine-tuning, all weights) is delivered with its policy version (weights.py), and a worker's
episodes record the versions they were sampled at. Because round r+1 starts before round r's step,
its episodes are one version old, or a mix; the stored behaviour logprobs carry the off-policy
correction, and `max_staleness` bounds it: with `max_staleness 0` the rounds run one after the
other and every episode is on-policy.

Resume: the checkpoint holds the round; the round's groups are planned against the store at the
workers' version, so a round cut short goes on with what is stored. A round whose overlapped
rollout was at the old version may be rolled out again at the new one after a restart.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time

from ptrain.engine.weights import policy_payload
from ptrain.online.rounds import end_round, kept_step, round_tasks, select_round
from ptrain.rollout.config import RolloutConfig
from ptrain.scale.workers import Fleet
from ptrain.store import Store
from ptrain.train.loop import Trainer


async def train_on_fleet(trainer: Trainer, store: Store, pack, rollout: RolloutConfig, rounds: int,
                         order: list[str]) -> list[dict]:  # fmt: skip
    """`rounds` rounds (fewer if resuming) of rollout on the fleet and one step here; each round's summary."""
    overlap = trainer.cfg.max_staleness != 0
    # each step's weights are merged into the workers' hf engines in place: a thread of the worker, not a process
    fleet = Fleet(store.path, dataclasses.replace(rollout, model=trainer.cfg.model, engine_process=False))
    rows: list[dict] = []

    async def deliver() -> list[int]:
        """The trainer's weights to every worker; saved under RUN/adapters/ too when a server must read them."""
        adapter_dir = ""
        if rollout.engine == "openai" and hasattr(trainer.model, "peft_config"):
            adapter_dir = str((store.path / "adapters" / f"v{trainer.policy_version:06d}").resolve())
            await asyncio.to_thread(trainer.model.save_pretrained, adapter_dir)
        return await fleet.deliver(policy_payload(trainer.model), trainer.policy_version, adapter_dir)

    def start(round_no: int) -> tuple[asyncio.Task, tuple[str, ...], float]:
        ids = round_tasks(trainer.cfg.groups_per_step, round_no, order)
        return asyncio.create_task(fleet.map("rollout", ids)), ids, time.monotonic()

    try:
        await fleet.start()
        await deliver()
        pending = start(trainer.round) if trainer.round < rounds else None
        while pending is not None:
            job, ids, started = pending
            await job
            rollout_s, version = time.monotonic() - started, trainer.policy_version
            pending = start(trainer.round + 1) if overlap and trainer.round + 1 < rounds else None
            oldest = version - (trainer.cfg.max_staleness if trainer.cfg.max_staleness >= 0 else 1)
            groups, selection, summary = select_round(trainer, store, pack, ids, oldest, rollout_s)
            summary["workers"] = len(fleet.alive)
            stopped = None
            if selection.groups:
                step_started = time.monotonic()
                row, stopped = await kept_step(trainer, selection)
                versions = [] if stopped else await deliver()
                summary.update(stepped=True, loss=row["loss"], grad_norm=row["grad_norm"],
                               train_s=time.monotonic() - step_started, worker_versions=versions)  # fmt: skip
            rows.append(end_round(trainer, summary, groups, save=stopped is not None))
            if stopped is not None:
                raise stopped
            if pending is None and not overlap and trainer.round < rounds:
                pending = start(trainer.round)
        return rows
    finally:
        await fleet.close()
