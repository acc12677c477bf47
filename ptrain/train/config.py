"""The train stage's configuration: one typed object, from CLI flags or a TOML file (or both).

    algo = "grpo"
    groups_per_step = 8
    lora_rank = 16

Flags override the file; an unknown key is an error. The loss settings are the fields of
`ptrain.train.grpo.LossConfig` under the same names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptrain.config import load_into
from ptrain.errors import ConfigError
from ptrain.train.grpo import ADVANTAGES, LossConfig
from ptrain.train.sharding import STRATEGIES

ALGOS = ("grpo", "sft")
TRAINERS = ("ptrain", "trl")
SCHEDULES = ("constant", "cosine", "linear")


@dataclass(frozen=True)
class TrainConfig:
    algo: str = "grpo"  # or "sft": supervised on demonstrations (gold episodes, passed episodes)
    trainer: str = "ptrain"  # or "trl": TRL's GRPOTrainer fed from the store
    model: str = "smollm2-135m"  # a packaged model name or a checkpoint directory
    init: str = ""  # start from this checkpoint's adapter, or a run's latest (e.g. an SFT warm start)
    split: str = "train"
    taskpack: str = ""  # train only on this taskpack's episodes ("" for all)
    demos: tuple[str, ...] = ()  # sft: the passed episodes of these runs' stores too (gold beside own successes)
    # -- the model
    lora: bool = True  # False: full fine-tuning
    lora_rank: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.0
    lora_targets: str = "all-linear"  # or comma-separated module names, e.g. "q_proj,v_proj"
    dtype: str = "auto"  # the compute dtype: "float32", "bfloat16", or auto (bfloat16 on a GPU); weights stay float32
    device: str = "auto"  # "cpu", "cuda", or auto
    strategy: str = "ddp"  # or "fsdp": weights, gradients and optimizer state sharded over ranks (FSDP2)
    gradient_checkpointing: bool = False
    # -- the optimizer
    lr: float = 0.0  # 0: 1e-4 for SFT with LoRA, 2e-5 for GRPO with LoRA, a tenth of those in full fine-tuning
    weight_decay: float = 0.0
    schedule: str = "constant"
    warmup_steps: int = 0
    max_grad_norm: float = 1.0
    # -- the batches
    groups_per_step: int = 8  # GRPO groups (SFT: episodes) per optimizer step, over all ranks
    micro_batch_tokens: int = 4096  # padded tokens per forward pass
    share_prefix: bool = True  # compute a micro-batch's common prefix (a group's prompt) once
    epochs: int = 1
    max_steps: int = 0  # 0: as many as the data gives
    max_staleness: int = -1  # train only on episodes at most this many policy versions old (-1: any)
    updates_per_step: int = 1  # optimizer updates per step, each on a share of its groups (PPO mini-batches)
    dynamic_sampling: int = 0  # online: up to this many extra rollouts a round to replace groups without signal
    curriculum: bool = (
        False  # online: draw each round's tasks by running pass rates, tier by tier (online/curriculum.py)
    )
    minutes: float = 0.0  # online: start no round that would end past this many minutes (0: no limit; rounds.py)
    mask_truncated: bool = False  # DAPO's overlong filtering: truncated episodes count in advantages, not the loss
    # -- the loss (see LossConfig)
    advantage: str = "grpo"  # or "drgrpo"
    clip_low: float = 0.2
    clip_high: float = 0.28
    aggregation: str = "token"
    old_policy: str = "behaviour"
    is_cap: float = 2.0
    ratio_level: str = "token"
    kl_beta: float = 0.0  # against the policy training started from (the warm start under --init)
    # -- checkpoints and logs
    mismatch_warn: float = 0.08  # warn when on-policy tokens' mean |log pi_trainer - log pi_behaviour| exceeds it
    # (measured on SmolLM2 at T = 0.7: float32 engine 3e-6, bfloat16 engine 0.027, a temperature not applied 0.26)
    save_every: int = 10  # steps; the last step is always saved
    keep_checkpoints: int = 3
    seed: int = 0
    tensorboard: bool = True

    def __post_init__(self) -> None:
        problems = []
        for name, allowed in (("algo", ALGOS), ("trainer", TRAINERS), ("schedule", SCHEDULES),
                              ("advantage", ADVANTAGES), ("dtype", ("auto", "float32", "bfloat16")),
                              ("strategy", STRATEGIES)):  # fmt: skip
            if getattr(self, name) not in allowed:
                problems.append(f"{name} {getattr(self, name)!r} is not one of {allowed}")
        for name in ("lora_rank", "groups_per_step", "micro_batch_tokens", "epochs", "save_every", "updates_per_step"):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.strategy == "fsdp" and self.trainer == "trl":
            problems.append("strategy fsdp is ptrain's trainer; TRL's runs under accelerate's own config")
        if self.demos and self.algo != "sft":
            problems.append("demos (other runs' passed episodes) are for algo sft")
        if self.minutes < 0:
            problems.append(f"minutes must be 0 (no limit) or more, got {self.minutes}")
        if self.dynamic_sampling < 0:
            problems.append(f"dynamic_sampling must be 0 or more, got {self.dynamic_sampling}")
        try:
            _ = self.loss
        except ValueError as e:
            problems.append(str(e))
        if problems:
            raise ConfigError("bad train config: " + "; ".join(problems))

    @property
    def loss(self) -> LossConfig:
        return LossConfig(
            clip_low=self.clip_low, clip_high=self.clip_high, aggregation=self.aggregation,
            old_policy=self.old_policy, is_cap=self.is_cap, ratio_level=self.ratio_level, kl_beta=self.kl_beta,
            max_tokens=self.micro_batch_tokens,
        )  # fmt: skip

    def compute_dtype(self, cpu: bool) -> str:
        """The dtype the passes compute in: `dtype`, or for "auto" bfloat16 on a GPU and float32 on a CPU."""
        return self.dtype if self.dtype != "auto" else "float32" if cpu else "bfloat16"

    @property
    def learning_rate(self) -> float:
        if self.lr > 0:
            return self.lr
        base = 1e-4 if self.algo == "sft" else 2e-5
        return base if self.lora else base / 10


def load_train_config(path: Path | None = None, **overrides: Any) -> TrainConfig:
    return load_into(TrainConfig, "train", path, **overrides)
