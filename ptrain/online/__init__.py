"""Online GRPO: rounds of rollout then one training step, above both training and rollout.

    round r:  tasks r*k .. r*k+k-1 of the (shuffled) task pool
              -> rollout G samples each at policy version v   (local.py: in-process engine and sandboxes;
                                                              ray.py: Ray workers, weights delivered)
              -> verify                                       (store)
              -> one GRPO step on those groups                -> version v+1

`train/` knows nothing of sandboxes, engines' processes or Ray; `rollout/` nothing of the trainer.
This package composes the two: `rounds.py` is what both modes share (which tasks a round takes,
which stored groups it trains on, the round's summary and checkpoint), `local.py` runs the rounds
in this process with the `hf` engine on the trainer's own weights, `ray.py` on a fleet of workers.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from ptrain.errors import ConfigError
from ptrain.online.rounds import RoundClock, task_order
from ptrain.rollout.chat import resolve_action_format
from ptrain.rollout.config import RolloutConfig
from ptrain.store import Store
from ptrain.taskpack import load as load_taskpack
from ptrain.train.config import TrainConfig
from ptrain.train.loop import Trainer


async def train_online(run: Path, cfg: TrainConfig, rollout: RolloutConfig, rounds: int, engine=None) -> list[dict]:
    """`rounds` rounds of rollout + one step (fewer if resuming); returns each round's summary.

    `engine` replaces the in-process engine on the trainer's weights (tests use a scripted policy)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:  # every rank would roll out the same tasks into one store
        raise ConfigError(f"online training runs in one process, not under torchrun ({world} processes here)",
                          fix="run `ptrain train --online` without torchrun; to spread the rollouts, add --ray")  # fmt: skip
    if cfg.strategy != "ddp":
        raise ConfigError("online training samples from the trainer's own weights: it needs strategy ddp",
                          fix="drop strategy = \"fsdp\" for --online (fsdp is for offline training on stored groups)")  # fmt: skip
    clock = RoundClock(cfg.minutes)  # from here: loading the model counts against the time limit
    store = Store(run, create=True)
    pack = load_taskpack(rollout.taskpack)
    rollout = dataclasses.replace(rollout, action_format=resolve_action_format(rollout.action_format, pack.tools()))
    if rollout.ray and (cfg.dynamic_sampling or cfg.curriculum or cfg.minutes):
        raise ConfigError("dynamic_sampling, the curriculum and a time limit (minutes) run in local online training "
                          "only, not on Ray (yet)",
                          fix="set dynamic_sampling = 0, curriculum = false and minutes = 0, or train without --ray")  # fmt: skip
    trainer = Trainer(cfg, run)
    trainer.start(rounds)
    order = task_order(pack, rollout)
    if rollout.ray:
        from ptrain.online.ray import train_on_fleet

        return await train_on_fleet(trainer, store, pack, rollout, rounds, order)
    from ptrain.online.local import train_local

    return await train_local(trainer, store, pack, rollout, rounds, order, engine, clock)
