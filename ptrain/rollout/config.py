"""The rollout stage's configuration: one typed object, from CLI flags or a TOML file (or both).

    # rollout.toml                      ptrain rollout runs/a --config rollout.toml --samples 8
    taskpack = "terminal-coding"
    split = "train"
    tasks = 32
    samples = 4

Flags override the file; a key the file misspells is an error that lists the known keys, never a
setting silently ignored, and the file is checked whole, the values a flag overrides too. Units are
in the names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptrain.config import load_into
from ptrain.engine.base import DTYPES
from ptrain.errors import ConfigError
from ptrain.rollout.chat import LISTINGS
from ptrain.rollout.parse import FORMATS

MODES = ("async", "lockstep")
ENGINES = ("hf", "openai", "gold")  # gold: replay the taskpack's gold solutions (demonstrations for SFT)


@dataclass(frozen=True)
class RolloutConfig:
    taskpack: str = "terminal-coding"
    split: str = "train"
    tasks: int | None = None  # how many tasks (a fixed sample of the split); None: all of them
    task_ids: tuple[str, ...] = ()  # exactly these tasks instead
    categories: tuple[str, ...] = ()  # only tasks of these categories ("" for all)
    difficulties: tuple[str, ...] = ()  # only tasks of these difficulty tiers, e.g. ("easy",)
    samples: int = 4  # G: samples per task, one GRPO group
    model: str = "smollm2-135m"  # a packaged model name or a checkpoint directory
    engine: str = "hf"
    base_url: str = ""  # the openai engine's server, e.g. http://127.0.0.1:8000/v1
    concurrency: int = 8  # episodes in flight (each holds a sandbox); more than max_batch keeps the batch full
    verify_concurrency: int = 2  # verifications in flight, beside the episodes
    mode: str = "async"  # or "lockstep": the synchronous baseline
    verify: bool = True  # verify each episode as it finishes
    evaluation: bool = False  # episodes of an evaluation (`ptrain eval`): marked so, never trained on
    action_format: str = "auto"  # "bash" (one ```bash block per turn), "hermes" (JSON tool calls), or "auto"
    tool_listing: str = "json"  # hermes: the tools as Hermes' JSON schemas, or "compact" (a line each, fewer tokens)
    max_turns: int = 20
    max_new_tokens: int = 512
    max_episode_tokens: int = 32768
    max_wall_s: float = 900.0
    context_window: int = 0  # 0: the model's
    state_note: bool = False
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int = 0
    retries: int = 2  # for sandbox and engine failures, per episode
    kv_budget_tokens: int = 0  # the hf engine's admission budget; 0: from free memory
    max_batch: int = 64  # the hf engine's most sequences decoded at once
    engine_threads: int = 0  # torch threads for the hf engine; 0: torch's default
    dtype: str = "auto"  # the hf engine's weights: auto (the checkpoint's), float32, bfloat16 or float16
    engine_process: bool = True  # the hf engine in a process of its own, where the scheduler's threads cannot stall it
    flush_every: int = 8  # episodes buffered before the store writes a shard
    flush_interval_s: float = 10.0  # or once the oldest buffered one is this old: what a kill can lose
    sandbox_cpus: float = 1.0
    sandbox_memory_mb: int = 2048
    sandbox_cpuset: str = ""  # pin sandboxes to these host cores ("" for any)
    artifact_max_mb: int = 64  # a workspace larger than this is not collected: a 0 for the model, saying so
    ray: str = ""  # run on Ray workers: the cluster's address ("auto", host:port, or "local" to start one)
    workers: int = 0  # Ray workers, each with its own engine and sandboxes; 0: one per node
    worker_cpus: float = 1.0  # Ray CPUs each worker reserves
    worker_gpus: float = 0.0  # Ray GPUs each worker reserves (a fraction shares a device)

    def __post_init__(self) -> None:
        problems = []
        if self.mode not in MODES:
            problems.append(f"mode {self.mode!r} is not one of {MODES}")
        if self.engine not in ENGINES:
            problems.append(f"engine {self.engine!r} is not one of {ENGINES}")
        if self.engine == "openai" and not self.base_url:
            problems.append("the openai engine needs base_url (e.g. http://127.0.0.1:8000/v1)")
        if self.action_format not in (*FORMATS, "auto"):
            problems.append(f"action_format {self.action_format!r} is not one of {(*FORMATS, 'auto')}")
        if self.tool_listing not in LISTINGS:
            problems.append(f"tool_listing {self.tool_listing!r} is not one of {LISTINGS}")
        if self.dtype not in DTYPES:
            problems.append(f"dtype {self.dtype!r} is not one of {DTYPES}")
        if self.split not in ("train", "dev", "test"):
            problems.append(f"split {self.split!r} is not one of train, dev, test")
        for name in ("samples", "concurrency", "verify_concurrency", "max_turns", "max_new_tokens", "max_batch",
                     "artifact_max_mb"):  # fmt: skip
            if getattr(self, name) < 1:
                problems.append(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.workers < 0 or self.worker_cpus < 0 or self.worker_gpus < 0:
            problems.append("workers, worker_cpus and worker_gpus cannot be negative")
        if self.tasks is not None and self.tasks < 1:
            problems.append(f"tasks must be at least 1, got {self.tasks}")
        if problems:
            raise ConfigError("bad rollout config: " + "; ".join(problems))


def load_config(path: Path | None = None, **overrides: Any) -> RolloutConfig:
    """Defaults, then the TOML file, then the overrides that are not None."""
    return load_into(RolloutConfig, "rollout", path, **overrides)
