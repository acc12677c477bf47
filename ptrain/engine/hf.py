"""The in-process transformers engine: continuous batching over a model the trainer can share.

In-process because the trainer and the engine then hold the same weights: a policy update is an
in-place change (a LoRA step) between two decode steps, not a weight transfer.

How it works. `generate` queues a request (`ptrain.engine.hf_request`) and awaits it. One worker
thread admits waiting requests by KV budget (`ptrain.engine.admission`: no mix of long episodes can
run out of memory, and one big request neither starves nor holds up small ones for long), then steps
the running batch (`ptrain.engine.hf_batch`): new prompts are prefilled (`ptrain.engine.prefill`),
each running row decodes one token in its preallocated KV slot (`ptrain.engine.slots`), and finished
rows leave. So a short request leaves as soon as it is done and a new one joins within one step.
Prompts reuse the KV of earlier sequences that started the same way (`ptrain.engine.prefix_cache`).

Policy version. `update_weights(fn, version)` (or `with engine.paused():`) runs between decode steps,
while no forward pass is in flight. A completion's `policy_version` is the version its first token was
sampled with; a sequence running across an update goes on with the new weights (and the cache the old
ones wrote), as in-flight updates do, and its logprobs are those it was actually sampled from. Every
pause clears the prefix cache: KV written by old weights must not start a new sequence.

`stats().extra` counts `prefix_hit_tokens` (prompt tokens whose KV was reused), `prefill_tokens` (the
prompt tokens actually fed; the two add up to `prompt_tokens`), `prefix_entries`,
`prefix_cached_tokens`, `decode_steps`, `packed_steps` (the decode steps that also prefilled),
`decode_cells` (rows x width over all decode steps: what their attention covered) and
`decode_context_tokens` (the part of those cells that held the rows' own tokens; the rest was padding).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer

from ptrain.engine import packed
from ptrain.engine.admission import admit, default_kv_budget_bytes, kv_bytes_per_token
from ptrain.engine.base import DTYPES, Completion, EngineStats, Sampling
from ptrain.engine.hf_batch import Batch
from ptrain.engine.hf_request import Request
from ptrain.engine.prefix_cache import PrefixCache
from ptrain.errors import ConfigError, EngineError

log = logging.getLogger(__name__)


class HFEngine:
    """An `Engine` over a loaded transformers causal LM (or a peft model wrapping one).

    The engine puts the model in eval mode and runs it under `torch.inference_mode()`. A trainer that
    shares the weights changes them inside `paused()` / `update_weights` and leaves the model in eval
    mode when it is done, or the engine samples with dropout on.
    """

    name = "hf"

    def __init__(
        self,
        module: torch.nn.Module,
        *,
        name: str | None = None,
        max_batch: int = 64,
        kv_budget_tokens: int | None = None,
        max_overtakes: int = 16,
        threads: int | None = None,
        seed: int | None = None,
        policy_version: int = 0,
        prefix_cache: bool = True,
        prefix_cache_entries: int = 256,
        min_prefix_reuse: int = 16,
        packed_prefill: bool = True,
    ):
        base = module.get_base_model() if hasattr(module, "get_base_model") else module
        config = base.config.get_text_config()
        if any(type(layer) is not DynamicLayer for layer in DynamicCache(config=base.config).layers):
            raise ConfigError(
                f"{type(base).__name__} uses sliding-window or non-attention layers; the hf engine runs full-attention models only"
            )
        if max_batch < 1 or max_overtakes < 0:
            raise ConfigError(f"max_batch {max_batch} must be >= 1 and max_overtakes {max_overtakes} >= 0")
        if prefix_cache_entries < 1 or min_prefix_reuse < 1:
            raise ConfigError(
                f"prefix_cache_entries {prefix_cache_entries} and min_prefix_reuse {min_prefix_reuse} must be >= 1",
                fix="turn the prefix cache off with prefix_cache=False instead",
            )
        self.module = module.eval()
        self.model = name or str(getattr(base.config, "_name_or_path", "") or type(base).__name__)
        self.policy_version = policy_version
        self.context_window = int(config.max_position_embeddings)
        self.device = next(base.parameters()).device
        self.max_batch, self.max_overtakes = max_batch, max_overtakes
        self.prefix_cache, self.min_prefix_reuse = prefix_cache, min_prefix_reuse
        self.kv_budget_tokens = kv_budget_tokens or default_kv_budget_bytes(self.device) // kv_bytes_per_token(
            config, base.dtype
        )
        if self.kv_budget_tokens < 2:
            raise ConfigError(
                f"kv_budget_tokens is {self.kv_budget_tokens}; it must hold at least one prompt token and one new token"
            )
        if threads:
            torch.set_num_threads(threads)  # process-wide: torch has one intra-op pool
        self._vocab = module.get_input_embeddings().num_embeddings
        self._seeds = random.Random(seed)
        self._cond = threading.Condition()  # guards the queue, the flags and the counters
        self._step_lock = threading.Lock()  # held for each step; `paused` takes it between steps
        self._waiting: deque[Request] = deque()
        self._closed, self._failure, self._pausers = False, EngineError("engine closed"), 0
        self._stats = EngineStats()
        self._prefix = PrefixCache(prefix_cache_entries)
        self.packed_prefill = packed_prefill and base.config._attn_implementation == packed.BASE
        self._batch = Batch(
            self.module,
            base,
            self.device,
            self._prefix,
            self._cond,
            self._stats,
            kv_budget_tokens=self.kv_budget_tokens,
            prefix_cache=prefix_cache,
            min_prefix_reuse=min_prefix_reuse,
            packed_prefill=self.packed_prefill,
        )
        self._thread = threading.Thread(target=self._work, name="ptrain-hf-engine", daemon=True)
        self._thread.start()

    @classmethod
    def load(
        cls, path: str | Path, device: str | None = None, dtype: str | torch.dtype | None = None, **options
    ) -> HFEngine:
        """Load a checkpoint directory onto `device` (CUDA when there is one) in `dtype` (the checkpoint's)."""
        from transformers import AutoModelForCausalLM

        if isinstance(dtype, str) and dtype not in DTYPES:
            raise ConfigError(f"unknown dtype {dtype!r}", fix=f"use one of {', '.join(DTYPES)}")
        if isinstance(dtype, str) and dtype != "auto":
            dtype = getattr(torch, dtype)
        device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        module = AutoModelForCausalLM.from_pretrained(path, dtype=dtype or "auto").to(device)
        return cls(module, **{"name": Path(path).name, **options})

    # -- the caller's side (any thread, any asyncio loop) --

    async def generate(self, token_ids: Sequence[int], sampling: Sampling) -> Completion:
        ids = [int(token) for token in token_ids]
        max_new = self._check(ids, sampling)
        seed = sampling.seed if sampling.seed is not None else self._seeds.getrandbits(63)
        generator = torch.Generator(self.device).manual_seed(seed) if sampling.temperature > 0 else None
        loop = asyncio.get_running_loop()
        request = Request(ids, sampling, max_new, generator, loop, loop.create_future())
        with self._cond:
            if self._closed:
                raise self._closed_error()
            self._waiting.append(request)
            self._cond.notify_all()
        try:
            return await request.future
        except asyncio.CancelledError:
            request.cancelled = True  # the worker drops it before its next step
            raise

    def _check(self, ids: list[int], sampling: Sampling) -> int:
        """The request's max_new_tokens, clamped to the context window, or an EngineError for it alone."""
        if not ids:
            raise EngineError("the prompt is empty; the engine needs at least one token to continue from")
        if len(ids) >= self.context_window:
            raise EngineError(
                f"the prompt has {len(ids)} tokens but the model's context window is {self.context_window}, "
                "which must leave room for at least one new token",
                fix="shorten the prompt (truncate the history or the tool outputs)",
            )
        bad = next((token for token in ids if not 0 <= token < self._vocab), None)
        if bad is not None:
            raise EngineError(
                f"token id {bad} is outside the vocabulary (0..{self._vocab - 1})",
                fix="tokenize with this model's tokenizer",
            )
        max_new = min(sampling.max_new_tokens, self.context_window - len(ids))
        if len(ids) + max_new > self.kv_budget_tokens:
            raise EngineError(
                f"the request needs {len(ids) + max_new} KV slots (prompt {len(ids)} + max_new_tokens {max_new}) "
                f"but the engine's whole budget is {self.kv_budget_tokens}",
                fix="lower max_new_tokens, shorten the prompt, or give the engine a larger kv_budget_tokens",
            )
        return max_new

    @contextlib.contextmanager
    def paused(self) -> Iterator[torch.nn.Module]:
        """Hold the worker between two steps (after the one in flight) and yield the model.

        Running sequences keep their cache and go on after it; the prefix cache is cleared. Blocking: from an asyncio loop, run it in
        a thread (`await asyncio.to_thread(engine.update_weights, fn, version)`).
        """
        with self._cond:
            self._pausers += 1
        try:
            with self._step_lock:
                with self._cond:  # KV written by the old weights must not start new sequences
                    self._prefix.clear()
                    self._batch.epoch += 1
                yield self.module
        finally:
            with self._cond:
                self._pausers -= 1
                self._cond.notify_all()

    def update_weights(self, fn: Callable[[torch.nn.Module], object] | None, policy_version: int) -> None:
        """Run `fn(model)` between decode steps (say, load a LoRA adapter in place) and bump the version."""
        with self.paused() as module:
            if fn is not None:
                with torch.no_grad():
                    fn(module)
            self.policy_version = policy_version

    def stats(self) -> EngineStats:
        """Counters since the start; `requests` and `prompt_tokens` count admitted requests (see the module docstring for `extra`)."""
        with self._cond:
            batch = self._batch
            extra = {
                "kv_budget_tokens": self.kv_budget_tokens,
                "kv_held_tokens": batch.slots.tokens_held(),
                "decode_steps": batch.steps,
                "packed_steps": batch.packed_steps,
                "decode_cells": batch.decode_cells,
                "decode_context_tokens": batch.decode_context,
                "prefix_hit_tokens": batch.hit_tokens,
                "prefill_tokens": batch.prefill_tokens,
                "prefix_entries": len(self._prefix.entries),
                "prefix_cached_tokens": self._prefix.tokens,
            }
            return dataclasses.replace(
                self._stats,
                waiting=len(self._waiting),
                running=len(batch.rows),
                extra={k: float(v) for k, v in extra.items()},
            )

    async def close(self) -> None:
        """Stop the worker after its current step; requests still queued or running get EngineError."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        await asyncio.to_thread(self._thread.join)

    def _closed_error(self) -> EngineError:
        return EngineError(self._failure.args[0], fix=self._failure.fix)  # a fresh one for each request

    # -- the worker thread --

    def _has_work(self) -> bool:
        return self._closed or (self._pausers == 0 and bool(self._waiting or self._batch.rows))

    def _work(self) -> None:
        batch = self._batch
        try:
            while True:
                with self._cond:
                    self._cond.wait_for(self._has_work)
                    if self._closed:
                        break
                    batch.joining = self._admit()
                with self._step_lock, torch.inference_mode():
                    start = time.monotonic()
                    batch.step(self.policy_version)
                    with self._cond:
                        self._stats.busy_s += time.monotonic() - start
        except Exception as exc:  # a failed forward pass: nothing in flight can be trusted
            log.exception("the hf engine's worker failed")
            self._failure = EngineError(
                f"the hf engine's worker failed: {type(exc).__name__}: {exc}",
                fix="the log has the traceback; start a new engine",
            )
        finally:
            with self._cond:
                self._closed = True
                doomed = {id(r): r for r in [*self._waiting, *batch.joining, *batch.rows]}.values()
                self._waiting.clear()
                self._prefix.clear()
            for request in doomed:
                request.settle(self._closed_error())
            batch.clear()

    def _admit(self) -> list[Request]:
        """Pop the waiting requests that fit now (caller holds `_cond`); see `ptrain.engine.admission`."""
        self._waiting = deque(r for r in self._waiting if not r.cancelled)
        batch = self._batch
        chosen = admit(
            self._waiting,
            batch.planned(),
            len(batch.rows),
            self._prefix,
            batch.match,
            max_batch=self.max_batch,
            max_overtakes=self.max_overtakes,
            budget=self.kv_budget_tokens,
        )
        for request in chosen:
            self._waiting.remove(request)
        self._stats.requests += len(chosen)
        self._stats.prompt_tokens += sum(len(r.token_ids) for r in chosen)
        return chosen
