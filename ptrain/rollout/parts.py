"""A rollout's parts from its config: the engine with its chat format, and the sandbox pools.

Shared by `ptrain rollout` on one machine and by each Ray worker (ptrain/scale/workers.py).
"""

from __future__ import annotations

from ptrain.engine import open_engine
from ptrain.rollout.chat import ChatFormat
from ptrain.rollout.config import RolloutConfig
from ptrain.sandbox import PoolSet
from ptrain.sandbox.container import SandboxLimits
from ptrain.taskpack import Taskpack


def build_engine(pack: Taskpack, cfg: RolloutConfig):
    """The engine `cfg` names and the chat format its episodes use (`cfg.action_format` already resolved)."""
    if cfg.engine == "gold":
        return gold_engine(pack, cfg)
    options = (
        {
            "max_batch": cfg.max_batch,
            "kv_budget_tokens": cfg.kv_budget_tokens,
            "threads": cfg.engine_threads,
            "dtype": cfg.dtype,
        }
        if cfg.engine == "hf"
        else {}
    )
    kind = "hf-process" if cfg.engine == "hf" and cfg.engine_process else cfg.engine
    engine, tokenizer = open_engine(kind, cfg.model, cfg.base_url, **options)
    return engine, ChatFormat(tokenizer, cfg.action_format, tool_listing=cfg.tool_listing)


def gold_engine(pack: Taskpack, cfg: RolloutConfig):
    """The taskpack's gold solutions replayed as the model's turns, in the model's chat format.

    Verified like any episode; the passed ones are demonstrations for `ptrain train --algo sft`."""
    from transformers import AutoTokenizer

    from ptrain.engine.models import resolve_model
    from ptrain.engine.scripted import ScriptedEngine
    from ptrain.rollout.gold import gold_replies

    fmt = ChatFormat(
        AutoTokenizer.from_pretrained(resolve_model(cfg.model)), cfg.action_format, tool_listing=cfg.tool_listing
    )
    engine = ScriptedEngine(
        fmt, gold_replies(fmt, pack, pack.tasks(cfg.split)), per_task=True, name="gold", model="gold"
    )
    return engine, fmt


def sandbox_pools(cfg: RolloutConfig) -> PoolSet:
    """Warm pools for `concurrency` episodes and their verifications (an async context manager)."""
    limits = SandboxLimits(
        memory_mb=cfg.sandbox_memory_mb,
        cpus=cfg.sandbox_cpus,
        cpuset=cfg.sandbox_cpuset,
        artifact_max_mb=cfg.artifact_max_mb,
    )
    return PoolSet(size=min(cfg.concurrency, 8), max_active=cfg.concurrency + cfg.verify_concurrency, limits=limits)
