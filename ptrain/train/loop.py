"""The training loop: GRPO (or SFT) steps over groups from the store, on one CPU, one GPU or many.

Read it top to bottom: `Trainer` loads the policy and optimizer (resuming from the latest
checkpoint when there is one), `plan` orders the store's trainable groups into steps, and `step`
does one step over a list of groups, `updates_per_step` optimizer updates (1 by default) each on a
share of them:

    deal whole groups to ranks -> micro-batches -> logprobs of model tokens (each episode's own
    temperature and top-p) -> loss -> backward -> all-reduce the gradients (sum) -> clip -> AdamW

An update, the extra forward passes (proximal policy, KL reference) and the step's metrics row are
in ptrain/train/step.py; this file is the order of things: plan, step, log, checkpoint, resume.

The first update's logprobs, on the weights the step started with, are compared with the stored
behaviour logprobs and logged (mismatch, k3, max, entropy); tokens sampled by this very policy
version must agree to rounding, and a step where they do not warns of a contract bug.

Each rank's loss is already divided by the update-wide totals (tokens, episodes), so the sum of the
ranks' gradients is exactly the gradient of the whole batch's loss, however unevenly groups fall.
How the ranks share the weights is the `strategy` (ptrain/train/sharding.py): `ddp`, a replica on
each rank and one flat gradient all-reduce per update, or `fsdp`, FSDP2 shards with the gradients
reduce-scattered in the backward pass. The weights the optimizer updates are float32 in both (LoRA's
frozen base is kept in the compute dtype); `dtype` is the compute dtype.
accelerate provides the devices and the process group (gloo on CPU under torchrun, NCCL on GPUs).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import random
import shutil
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from ptrain.store import Store
from ptrain.train.batch import Selection, Sequence, select_grpo, select_sft
from ptrain.train.checkpoint import (
    partial_dir,
    read_latest,
    read_trainer_state,
    seed_everything,
    trim,
    write_checkpoint,
)
from ptrain.train.config import TrainConfig
from ptrain.train.model import Scorer, load_policy, trainable_parameters
from ptrain.train.sharding import SHARDED_DIR, ensure_process_group, full, load_sharded, save_sharded, shard
from ptrain.train.step import TrainError, all_reduce, metrics_row, proximal_logprobs, update

log = logging.getLogger("ptrain.train")


def select_from_store(store: Store, cfg: TrainConfig, policy_version: int = 0) -> dict[str, Selection]:
    """Every trainable group of the store, by group id (SFT: every passed episode, by episode id)."""
    filters: dict[str, Any] = {"split": cfg.split, **({"taskpack": cfg.taskpack} if cfg.taskpack else {})}
    if cfg.algo == "sft":
        stores = [store, *(Store(Path(run)) for run in cfg.demos)]
        return {e.episode_id: select_sft([e]) for s in stores for e in s.episodes(**filters, min_reward=1.0)}
    min_version = policy_version - cfg.max_staleness if cfg.max_staleness >= 0 else None
    return {
        g.group_id: select_grpo([g], cfg.advantage, min_version, cfg.mask_truncated) for g in store.groups(**filters)
    }


def epoch_order(group_ids: list[str], seed: int, epoch: int) -> list[str]:
    """The order of an epoch's groups: sorted ids shuffled by (seed, epoch), the same for every trainer."""
    order = sorted(group_ids)
    random.Random(seed * 1000 + epoch).shuffle(order)
    return order


class Trainer:
    def __init__(self, cfg: TrainConfig, run: Path, accelerator=None):
        from accelerate import Accelerator

        self.cfg, self.run = cfg, Path(run)
        cpu = cfg.device == "cpu" or (cfg.device == "auto" and not torch.cuda.is_available())
        self.compute_dtype = getattr(torch, cfg.compute_dtype(cpu))
        self.sharded = cfg.strategy == "fsdp"
        self.acc = accelerator or Accelerator(cpu=cpu)  # the autocast is ours (below): accelerate's is process-wide
        self.rank, self.world = self.acc.process_index, self.acc.num_processes
        if self.rank > 0:  # the ranks' warnings are rank 0's (the rows are summed over ranks): say them once
            logging.getLogger("ptrain.train").setLevel(logging.ERROR)
        seed_everything(cfg.seed)  # every rank draws the same LoRA initialisation
        self.model, self.tokenizer = load_policy(cfg, self.acc.device)  # trainable weights float32: the master copy
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        self.score = Scorer(self.model)  # the forward every pass goes through (FSDP2's root under fsdp)
        if self.sharded:
            ensure_process_group(self.acc.device)
            shard(self.score, self.model, self.compute_dtype)
        self.params = trainable_parameters(self.model)
        # the KL reference is the policy training starts from: under --init, the warm start's adapter, kept
        # here before a resumed checkpoint replaces it (without --init, the adapter switched off is the start)
        self.reference = [p.detach().clone() for p in self.params] if cfg.init and cfg.kl_beta > 0 else None
        self.optimizer = torch.optim.AdamW(self.params, lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
        self.scheduler = None  # made by `plan`, once the number of steps is known
        self.step_no = 0
        self.base_version = 0
        self.order: list[str] = []  # the epoch's group ids, in training order (saved for exact resume)
        self.epoch, self.position = 0, 0
        self.round = 0  # online training: rollout-then-train rounds done
        self.checkpoints = self.run / "train" / "checkpoints"
        self.metrics = self.run / "metrics" / "train.jsonl"
        self.board = None
        self._resume_state = self._load_latest()

    # -- versions and data --------------------------------------------------------------------

    def autocast(self):
        """The forward passes' compute dtype under ddp (fsdp casts the gathered weights itself)."""
        if self.compute_dtype == torch.float32 or self.sharded:
            return contextlib.nullcontext()
        return torch.autocast(self.acc.device.type, dtype=self.compute_dtype)

    @property
    def policy_version(self) -> int:
        return self.base_version + self.step_no

    def select(self, store: Store) -> dict[str, Selection]:
        return select_from_store(store, self.cfg, self.policy_version)

    def plan(self, store: Store) -> list[list[str]]:
        """The remaining steps of training, each a list of group ids; resumes where a checkpoint left off."""
        cfg = self.cfg
        self.selections = self.select(store)
        usable = sorted(g for g, s in self.selections.items() if s.groups)
        dropped = sum((s.dropped for s in self.selections.values()), Counter())
        if dropped:
            log.warning("train: left out %s", ", ".join(f"{n} {why}" for why, n in dropped.most_common()))
        if not usable:
            raise TrainError(
                f"nothing to train on in {self.run}: {len(self.selections)} groups, none with signal "
                f"({', '.join(f'{n} {why}' for why, n in dropped.most_common()) or 'the store is empty'})",
                fix="run `ptrain rollout` and `ptrain verify` first; for GRPO a group needs different rewards "
                "(try more samples, an easier split, or an SFT warm start: --algo sft)",
            )
        steps_per_epoch = math.ceil(len(usable) / cfg.groups_per_step)
        total = steps_per_epoch * cfg.epochs
        if cfg.max_steps:
            total = min(total, cfg.max_steps)
        self.start(total)
        steps = []
        epoch, position, order = self.epoch, self.position, self.order
        while self.step_no + len(steps) < total:
            if not order or position >= len(order):
                epoch, position = (epoch + 1, 0) if order else (epoch, 0)
                order = epoch_order(usable, cfg.seed, epoch)
            chunk = [
                g
                for g in order[position : position + cfg.groups_per_step]
                if g in self.selections and self.selections[g].groups
            ]
            steps.append((epoch, position, order, chunk))
            position += cfg.groups_per_step
        self._steps = steps
        return [chunk for *_, chunk in steps]

    def train(self, store: Store, stop_at: int | None = None) -> list[dict]:
        """Plan, then run the remaining steps (up to step `stop_at`), checkpointing as configured.

        Returns the steps' metrics. `stop_at` pauses without changing the plan or the LR schedule
        (unlike `max_steps`), so a later call goes on exactly as if there had been no pause."""
        self.plan(store)
        rows = []
        for epoch, position, order, chunk in self._steps:
            if stop_at is not None and self.step_no >= stop_at:
                self.save()
                break
            groups = [seqs for g in chunk for seqs in self.selections[g].groups]
            row = self.step(groups, [self.selections[g] for g in chunk])
            self.epoch, self.position, self.order = epoch, position + self.cfg.groups_per_step, order
            last = (epoch, position) == self._steps[-1][:2]
            if self.step_no % self.cfg.save_every == 0 or last:
                self.save()
            rows.append(row)
        return rows

    # -- one optimizer step ---------------------------------------------------------------------

    def step(self, groups: list[list[Sequence]], selections: list[Selection] = ()) -> dict:
        """One training step over `groups`: `updates_per_step` optimizer updates, each on a share of them.

        The first update's forward passes run on the weights the step started with, so its logprobs
        measure the trainer-vs-behaviour mismatch; under "decoupled" they are computed beforehand,
        once, as the proximal policy every update clips against."""
        started = time.monotonic()
        count = min(self.cfg.updates_per_step, max(len(groups), 1))
        updates = [groups[u::count] for u in range(count)]
        proximal = proximal_logprobs(self, updates) if self.cfg.old_policy == "decoupled" else None
        self.model.train()
        sums: Counter = Counter()
        peaks: Counter = Counter()
        lr = self.optimizer.param_groups[0]["lr"]
        for u, part in enumerate(updates):
            sums["grad_norm"] += update(self, part, proximal, sums, peaks, measure=u == 0)
        self.step_no += 1
        keys = sorted(sums)
        reduced = dict(zip(keys, all_reduce([sums[k] for k in keys], self.acc.device, self.world), strict=True))
        reduced["grad_norm"] /= count * self.world  # each rank added the same global norm, once per update
        peak_keys = sorted(peaks)
        maxed = all_reduce([peaks[k] for k in peak_keys], self.acc.device, self.world, op="max")
        reduced |= {f"{k}_max": v for k, v in zip(peak_keys, maxed, strict=True)}
        reduced["groups"] = len(groups)
        seconds = time.monotonic() - started
        row = metrics_row(self.cfg, self.step_no, self.policy_version, reduced, selections, count, lr, seconds)
        self._log(row)
        return row

    def _log(self, row: dict) -> None:
        if self.rank != 0:
            return
        self.metrics.parent.mkdir(parents=True, exist_ok=True)
        with self.metrics.open("a") as f:
            f.write(json.dumps(row) + "\n")
        if self.cfg.tensorboard:
            if self.board is None:
                from torch.utils.tensorboard import SummaryWriter

                self.board = SummaryWriter(str(self.run / "tensorboard" / "train"))
            for key, value in row.items():
                if isinstance(value, int | float) and key not in ("step", "time"):
                    self.board.add_scalar(f"train/{key}", value, self.step_no)
            self.board.flush()
        log.info("step %d  loss %.4f  reward %s  grad %.3f  %.0f tok/s", row["step"], row["loss"],
                 "-" if row["reward_mean"] is None else f"{row['reward_mean']:.3f}", row["grad_norm"],
                 row["tokens_per_s"])  # fmt: skip

    # -- the learning-rate schedule ---------------------------------------------------------------

    def start(self, total_steps: int) -> None:
        """The LR schedule over `total_steps`, then the checkpoint's optimizer, schedule and RNG if resuming."""
        from transformers import get_scheduler

        self.total_steps = total_steps
        per_step = self.cfg.updates_per_step  # the schedule counts optimizer updates
        self.scheduler = get_scheduler(self.cfg.schedule, self.optimizer,
                                       num_warmup_steps=self.cfg.warmup_steps * per_step,
                                       num_training_steps=max(total_steps * per_step, 1))  # fmt: skip
        if self._resume_state:
            self._restore(self._resume_state)

    # -- checkpoints --------------------------------------------------------------------------------

    def save(self) -> Path:
        """A checkpoint of this step (see checkpoint.py); every rank waits until it is on disk.

        Under fsdp every rank first writes its shards (weights and optimizer state) into the
        checkpoint's partial directory, and a LoRA adapter is gathered whole for rank 0 to save."""
        final = self.checkpoints / f"step-{self.step_no:06d}"
        shards = None
        if self.sharded:
            shards = partial_dir(final)
            if self.rank == 0:
                shutil.rmtree(shards, ignore_errors=True)
            self.acc.wait_for_everyone()
            save_sharded(shards / SHARDED_DIR, self.score, self.model, self.optimizer)
        adapter = self.gathered_adapter() if self.sharded and hasattr(self.model, "peft_config") else None
        if self.rank == 0:
            state = {"step": self.step_no, "policy_version": self.policy_version, "base_version": self.base_version,
                     "epoch": self.epoch, "position": self.position, "order": self.order, "round": self.round,
                     "config": asdict(self.cfg), "saved_at": time.time(), "strategy": self.cfg.strategy,
                     "world_size": self.world}  # fmt: skip
            trainer_state = {"optimizer": None if self.sharded else self.optimizer.state_dict(),
                             "scheduler": self.scheduler.state_dict() if self.scheduler else None}  # fmt: skip
            write_checkpoint(final, self.model, trainer_state, state, self.cfg.keep_checkpoints, sharded=shards,
                             adapter=adapter)  # fmt: skip
        self.acc.wait_for_everyone()
        return final

    def gathered_adapter(self) -> dict[str, torch.Tensor]:
        """The whole LoRA adapter's weights by name, gathered from the shards (every rank takes part)."""
        return {name: full(p.detach()).cpu() for name, p in self.model.named_parameters() if p.requires_grad}

    def _load_latest(self) -> dict | None:
        state = read_latest(self.checkpoints, self.model, sharded=self.sharded)
        if state and self.sharded:
            load_sharded(state["path"] / SHARDED_DIR, self.score, self.model)  # the optimizer's state in _restore
        if state:
            self.step_no, self.base_version = state["step"], state["base_version"]
            self.epoch, self.position, self.order = state["epoch"], state["position"], state["order"]
            self.round = state.get("round", 0)
            log.info("train: resuming from %s (step %d)", state["path"], self.step_no)
        return state

    def _restore(self, state: dict) -> None:
        """Optimizer, scheduler and RNG of the checkpoint; metrics rows after it are dropped (they are redone)."""
        saved = read_trainer_state(state["path"])
        if self.sharded:
            load_sharded(state["path"] / SHARDED_DIR, self.score, self.model, self.optimizer)
        else:
            self.optimizer.load_state_dict(saved["optimizer"])
        if saved["scheduler"] and self.scheduler:
            self.scheduler.load_state_dict(saved["scheduler"])
        if self.rank == 0:
            trim(self.metrics, lambda row: row["step"] <= self.step_no)
            trim(self.run / "metrics" / "online.jsonl", lambda row: row["round"] <= self.round)
        self._resume_state = None
