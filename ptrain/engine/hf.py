"""The in-process transformers engine: continuous batching over a model the trainer can share.

In-process because the trainer and the engine then hold the same weights: a policy update is an
in-place change (a LoRA step) between two decode steps, not a weight transfer.

How it batches. One worker thread owns the running batch: a `SlotKV` (`ptrain.engine.slots`) that
keeps each row's keys and values in a preallocated slot, left-aligned, so a decode step writes every
row's new token in place at the row's own length and a row joins or leaves without the batch's cache
being copied. Between decode steps the worker

  1. admits waiting requests (below), prefills them together (left-padded, in a cache of their own)
     and copies each one's KV into a free slot;
  2. decodes one token for every running row;
  3. removes finished and cancelled rows: the last running rows move into the slots they free.

When rows are running, steps 1 and 2 are one forward pass (`ptrain.engine.packed`): the rows' next
tokens and the new prompts' tokens go in as one packed sequence, so a prompt arriving mid-batch costs
its tokens' compute but not a second pass over the weights (`packed_prefill=False` turns this off;
only models on sdpa attention pack). Prompts that share a start they would reuse from each other
still prefill apart, in two rounds (below).

So a short request leaves as soon as it is done and a new one joins within one step. torch releases
the GIL during forward passes, so the asyncio loops that call `generate` keep running; results go
back to them with `loop.call_soon_threadsafe`.

Admission by KV budget. A batch costs rows x width, the width being the longest row's cache. For the
running rows plus the candidates the engine computes the worst future peak of rows x width if no row
stops early (`kv_peak`), and admits a candidate only while that peak plus the prefix cache's entries
(below) stays within `kv_budget_tokens`; so no mix of long episodes can run out of memory. (The slots
round rows and columns up to whole blocks, and a prefill holds its own cache for a moment; the
default budget, a quarter of free RAM or half of free GPU memory, leaves room for that; the prefill
feeds at most `PREFILL_TOKENS` padded tokens a step, not counting those the prefix cache holds.) A
request whose own prompt + max_new_tokens exceeds the budget can never run and fails at once.

Order: first come, first served, but a request that does not fit may be overtaken by later ones that
do; once `max_overtakes` requests have passed it, nothing behind it is admitted until it fits (the
batch drains, so it will). One big request neither starves nor holds up small ones for long.

Policy version. `update_weights(fn, version)` (or `with engine.paused():`) runs between decode steps,
while no forward pass is in flight. A completion's `policy_version` is the version its first token was
sampled with; a sequence running across an update goes on with the new weights (and the cache the old
ones wrote), as in-flight updates do, and its logprobs are those it was actually sampled from.

Prefix caching (as vLLM's and SGLang's automatic prefix caching; `prefix_cache=False` turns it off).
An agent's next turn is its last prompt + completion + a tool result, and a taskpack's episodes share
one system prompt, so most of a prompt was often run before. When a row is prefilled the engine keeps
a copy of its prompt's KV as a `PrefixEntry`, so episodes that arrive while it runs reuse it; when the
row leaves the batch (finished or cancelled) that entry gives way to one for all the tokens it fed
(prompt + completion but the last token, which has no KV yet). Attention is causal, so an entry's first L columns are
valid for any sequence that starts with the same L tokens: on admission a request takes the entry with
the longest common prefix (if at least `min_prefix_reuse` tokens, and always leaving one token to feed
for the logits) and only the rest of its prompt is prefilled, positions going on from there.

  * Rows are prefilled in groups of similar new-token counts (`prefill_groups`). A group feeds every row
    the same number of tokens, N, the most any row needs; a row that reuses more re-feeds the last few
    of its cached tokens instead of padding (the same compute), so each row is [left pad][reused
    prefix][fed tokens], contiguous and right-aligned in the prefill's cache, with positions from
    the mask. Each row then takes a slot as above.
  * Requests admitted together that share a start no entry holds yet (a GRPO group, episodes starting
    with one system prompt) do not all prefill it: the first is prefilled in a first round and the rest
    in a second round reusing its KV.
  * Entries count against `kv_budget_tokens`: a candidate is admitted only if the batch's peak plus the
    entries it needs fit, evicting least recently used entries to make room; storing one evicts the
    same way (or skips it). An entry that the new one extends (the previous turn of the same episode)
    is dropped; one that extends the new one is kept instead. At most `prefix_cache_entries` are kept.
  * KV written by old weights must not start a new sequence: every pause (`paused`, `update_weights`)
    clears the entries and bumps an epoch, and a row prefilled before the last pause is not stored.

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
import inspect
import logging
import os
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
from ptrain.engine.base import DTYPES, Completion, EngineStats, Sampling
from ptrain.engine.sampling import sample
from ptrain.engine.slots import SlotKV
from ptrain.errors import ConfigError, EngineError

CPU_MEMORY_SHARE = 0.25  # of MemAvailable, for the default KV budget
GPU_MEMORY_SHARE = 0.5  # of free device memory
PREFILL_TOKENS = 8192  # most padded tokens fed in one step's prefill (a longer prompt goes alone)
SHARED_PREFILL = 2  # a prefill group's longest new part is at most this times its shortest

log = logging.getLogger(__name__)


def kv_peak(rows: Sequence[tuple[int, int]]) -> int:
    """The most KV slots (rows x width) a batch will hold if no row stops early.

    Each row is (cached, left): tokens in its cache now, tokens it may still generate. After s steps a
    row still alive (s <= left) holds cached + s; the width is that of the longest live row, so the
    peak falls on the last step of some row: scan rows by how long they live, longest first.
    """
    peak = widest = 0
    for alive, (cached, left) in enumerate(sorted(rows, key=lambda row: -row[1]), start=1):
        widest = max(widest, cached)
        peak = max(peak, alive * (widest + left))
    return peak


def common_prefix(a: list[int], b: list[int]) -> int:
    """How many leading tokens two id lists share (a binary search over slice comparisons, run in C)."""
    low, high = 0, min(len(a), len(b))
    if a[:high] == b[:high]:
        return high
    while high - low > 1:  # a[:low] == b[:low] and a[:high] != b[:high]
        middle = (low + high) // 2
        low, high = (middle, high) if a[:middle] == b[:middle] else (low, middle)
    return low


def prefill_groups(needs: Sequence[int]) -> list[list[int]]:
    """Which prompts to prefill together, by the tokens each must feed: indices, longest first.

    A group feeds every row as many tokens as its longest, so it takes rows needing at least
    1 / SHARED_PREFILL of that, and at most PREFILL_TOKENS padded tokens (one row always fits).
    """
    groups: list[list[int]] = []
    for index in sorted(range(len(needs)), key=lambda i: -needs[i]):
        group = groups[-1] if groups else []
        longest = needs[group[0]] if group else 0
        if group and needs[index] * SHARED_PREFILL >= longest and (len(group) + 1) * longest <= PREFILL_TOKENS:
            group.append(index)
        else:
            groups.append([index])
    return groups


def default_kv_budget_bytes(device: torch.device) -> int:
    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[0] * GPU_MEMORY_SHARE)
    try:
        with open("/proc/meminfo") as meminfo:
            kib = next(int(line.split()[1]) for line in meminfo if line.startswith("MemAvailable:"))
        available = kib * 1024
    except (OSError, StopIteration):
        available = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    return int(available * CPU_MEMORY_SHARE)


def kv_shape(config) -> tuple[int, int, int]:
    """(layers, kv heads, head dim) of a model's KV cache."""
    heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    return config.num_hidden_layers, heads, head_dim


def kv_bytes_per_token(config, dtype: torch.dtype) -> int:
    """Keys and values of every layer for one token: 2 x layers x kv heads x head dim x dtype size."""
    layers, heads, head_dim = kv_shape(config)
    return 2 * layers * heads * head_dim * dtype.itemsize


@dataclasses.dataclass(eq=False)
class _Request:
    """One `generate` call; the worker thread owns it once it is queued."""

    token_ids: list[int]
    sampling: Sampling
    max_new_tokens: int  # clamped to the context window
    generator: torch.Generator | None
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future
    queued_at: float = dataclasses.field(default_factory=time.monotonic)
    admitted_at: float = 0.0
    overtaken: int = 0
    cancelled: bool = False
    policy_version: int = 0
    tokens: list[int] = dataclasses.field(default_factory=list)
    logprobs: list[float] = dataclasses.field(default_factory=list)
    finish_reason: str | None = None
    prefix: PrefixEntry | None = None  # the KV it reuses for its first `reuse` tokens
    reuse: int = 0
    epoch: int = 0  # the weights epoch it was prefilled in

    def settle(self, outcome: Completion | BaseException) -> None:
        with contextlib.suppress(RuntimeError):  # the caller's loop is closed: nobody is waiting
            self.loop.call_soon_threadsafe(_deliver, self.future, outcome)


def _deliver(future: asyncio.Future, outcome: Completion | BaseException) -> None:
    if future.done():  # cancelled by the caller
        return
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


@dataclasses.dataclass(eq=False)
class PrefixEntry:
    """The KV a sequence left behind: `kv[layer]` is (keys, values), each [1, kv heads, len(ids), head dim]."""

    ids: list[int]
    kv: list[tuple[torch.Tensor, torch.Tensor]]
    epoch: int  # the engine's weights epoch when it was written


class PrefixCache:
    """Finished sequences' KV for the requests that start the same way, least recently used first.

    Not thread-safe: the engine changes it only while holding its lock.
    """

    def __init__(self, max_entries: int):
        self.max_entries = max_entries
        self.entries: list[PrefixEntry] = []  # least recently used first
        self.tokens = 0

    def match(self, ids: list[int]) -> tuple[PrefixEntry | None, int]:
        """The entry sharing the longest start with `ids`, and how many tokens it shares (None, 0 if none)."""
        best, longest = None, 0
        for entry in self.entries:
            if entry.ids[: longest + 1] == ids[: longest + 1]:  # else it cannot share more
                shared = common_prefix(entry.ids, ids)
                if shared > longest:
                    best, longest = entry, shared
        return best, longest

    def touch(self, entry: PrefixEntry) -> None:
        if entry in self.entries:
            self.entries.remove(entry)
            self.entries.append(entry)

    def store(self, entry: PrefixEntry, limit: int) -> None:
        """Keep `entry`, dropping the entries it extends, and hold at most `limit` tokens (else skip it)."""
        if len(entry.ids) > limit:
            return
        for old in list(self.entries):
            shared = common_prefix(old.ids, entry.ids)
            if shared == len(entry.ids):  # old holds all of it already
                self.touch(old)
                return
            if shared == len(old.ids):  # the new one extends old: the next turn of the same episode
                self._drop(old)
        self.make_room(limit - len(entry.ids))
        while len(self.entries) >= self.max_entries:
            self._drop(self.entries[0])
        self.entries.append(entry)
        self.tokens += len(entry.ids)

    def make_room(self, limit: int, keep: Sequence[PrefixEntry | None] = ()) -> bool:
        """Evict the least recently used entries but `keep` until at most `limit` tokens are held.

        False, evicting nothing, when the kept entries alone hold more.
        """
        kept = [entry for entry in self.entries if any(entry is k for k in keep)]
        if sum(len(entry.ids) for entry in kept) > limit:
            return False
        for entry in [entry for entry in self.entries if entry not in kept]:
            if self.tokens <= limit:
                break
            self._drop(entry)
        return True

    def clear(self) -> None:
        self.entries, self.tokens = [], 0

    def _drop(self, entry: PrefixEntry) -> None:
        self.entries.remove(entry)
        self.tokens -= len(entry.ids)


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
        self._config = base.config
        self._vocab = module.get_input_embeddings().num_embeddings
        self._cache_arg = "cache" if "cache" in inspect.signature(base.forward).parameters else "past_key_values"
        self._seeds = random.Random(seed)
        self._cond = threading.Condition()  # guards the queue, the flags and the counters
        self._step_lock = threading.Lock()  # held for each step; `paused` takes it between steps
        self._waiting: deque[_Request] = deque()
        self._joining: list[_Request] = []
        self._rows: list[_Request] = []  # the running batch, one per cache row
        self._slots = SlotKV(*kv_shape(config), base.dtype, self.device)  # row i holds _rows[i]
        self._next = torch.empty(0, dtype=torch.long, device=self.device)  # each row's last token, fed next step
        self._closed, self._failure, self._pausers = False, EngineError("engine closed"), 0
        self._stats = EngineStats()
        self._steps = self._hit_tokens = self._prefill_tokens = self._packed_steps = 0
        self._decode_cells = self._decode_context = 0  # rows x width attended, and the rows' own tokens of it
        self._prefix = PrefixCache(prefix_cache_entries)
        self.packed_prefill = packed_prefill and base.config._attn_implementation == packed.BASE
        self._epoch = 0  # bumped by every pause: the weights may have changed
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
        request = _Request(ids, sampling, max_new, generator, loop, loop.create_future())
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
                    self._epoch += 1
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
            held = self._slots.tokens_held()
            extra = {
                "kv_budget_tokens": self.kv_budget_tokens,
                "kv_held_tokens": held,
                "decode_steps": self._steps,
                "packed_steps": self._packed_steps,
                "decode_cells": self._decode_cells,
                "decode_context_tokens": self._decode_context,
                "prefix_hit_tokens": self._hit_tokens,
                "prefill_tokens": self._prefill_tokens,
                "prefix_entries": len(self._prefix.entries),
                "prefix_cached_tokens": self._prefix.tokens,
            }
            return dataclasses.replace(
                self._stats,
                waiting=len(self._waiting),
                running=len(self._rows),
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
        return self._closed or (self._pausers == 0 and bool(self._waiting or self._rows))

    def _work(self) -> None:
        try:
            while True:
                with self._cond:
                    self._cond.wait_for(self._has_work)
                    if self._closed:
                        break
                    self._joining = self._admit()
                with self._step_lock, torch.inference_mode():
                    start = time.monotonic()
                    self._step()
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
                doomed = {id(r): r for r in [*self._waiting, *self._joining, *self._rows]}.values()
                self._waiting.clear()
                self._prefix.clear()
            for request in doomed:
                request.settle(self._closed_error())
            self._rows, self._joining = [], []
            self._slots.keep([])

    def _admit(self) -> list[_Request]:
        """Pop the waiting requests that fit now (caller holds `_cond`); see the module docstring."""
        self._waiting = deque(r for r in self._waiting if not r.cancelled)
        planned = self._planned()
        chosen: list[_Request] = []
        passed: list[_Request] = []
        for request in self._waiting:
            if len(self._rows) + len(chosen) >= self.max_batch:
                break
            trial = [*planned, (len(request.token_ids), request.max_new_tokens)]
            peak = kv_peak(trial)
            prefix, reuse = self._match(request.token_ids) if peak <= self.kv_budget_tokens else (None, 0)
            longest = max([len(r.token_ids) - r.reuse for r in chosen] + [len(request.token_ids) - reuse])
            if chosen and (len(chosen) + 1) * longest > PREFILL_TOKENS:
                break
            keep = [r.prefix for r in chosen]
            room = self._prefix.make_room(self.kv_budget_tokens - peak, [*keep, prefix])
            if not room and prefix is not None:  # its entry itself does not fit beside it: prefill it all
                prefix, reuse = None, 0
                room = self._prefix.make_room(self.kv_budget_tokens - peak, keep)
            if room:
                planned = trial
                chosen.append(request)
                request.prefix, request.reuse = prefix, reuse
                if prefix is not None:
                    self._prefix.touch(prefix)
                for waiting in passed:
                    waiting.overtaken += 1
            elif request.overtaken >= self.max_overtakes:
                break  # it has waited long enough: nothing behind it goes first
            else:
                passed.append(request)
        for request in chosen:
            self._waiting.remove(request)
        self._stats.requests += len(chosen)
        self._stats.prompt_tokens += sum(len(r.token_ids) for r in chosen)
        return chosen

    def _match(self, ids: list[int]) -> tuple[PrefixEntry | None, int]:
        """The entry to reuse and for how many tokens: at least `min_prefix_reuse`, leaving one to feed."""
        prefix, shared = self._prefix.match(ids) if self.prefix_cache else (None, 0)
        shared = min(shared, len(ids) - 1)
        return (prefix, shared) if shared >= self.min_prefix_reuse else (None, 0)

    def _planned(self) -> list[tuple[int, int]]:
        """The running rows as `kv_peak` takes them: (tokens cached, tokens still to generate)."""
        return [(len(r.token_ids) + len(r.tokens), r.max_new_tokens - len(r.tokens)) for r in self._rows]

    def _step(self) -> None:
        # the joining stay in self._joining until they are rows, so a failed pass settles them too
        if self._joining and self._rows and self._packable(self._joining):
            self._step_packed(self._joining)
            self._joining = []
            self._packed_steps += 1
            self._retire()
            return
        if self._joining:
            self._prefill(self._joining)
            self._joining = []
        self._retire()
        if self._rows:
            slots = self._slots
            cache = slots.step_cache()
            self._count_step()
            logits = self._forward(self._next[:, None], slots.mask(), slots.lengths[:, None], cache)
            slots.advance()
            self._next = self._record(self._rows, logits)
            self._retire()

    def _count_step(self) -> None:
        """Count a decode step and what its attention covers: rows x width cells, of which the rows' own tokens."""
        slots = self._slots
        self._steps += 1
        self._decode_cells += slots.rows * slots.width
        self._decode_context += sum(slots.host_lengths) + slots.rows

    def _forward(
        self, ids: torch.Tensor, mask: torch.Tensor, pos: torch.Tensor, cache: DynamicCache, **kwargs
    ) -> torch.Tensor:
        out = self.module(
            input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True, **{self._cache_arg: cache}, **kwargs
        )
        return out.logits[:, -1, :].float()

    def _prefill(self, requests: list[_Request]) -> None:
        """Run the new prompts (past what they reuse), sample their first tokens, merge them into the batch."""
        now = time.monotonic()
        first: list[_Request] = []
        later: list[tuple[_Request, _Request, int]] = []  # a request, the one before it that it starts like, how much
        for request in requests:
            self._start(request, now)
            leader, shared = self._leader(request, first)
            if leader is not None:
                later.append((request, leader, shared))
            else:
                first.append(request)
        parts = self._prefill_groups(first)
        if later:
            where = {id(r): (cache, row, mask.shape[1]) for rows, cache, mask, _ in parts for row, r in enumerate(rows)}
            for request, leader, shared in later:  # the leader's prompt KV, straight from its prefill
                cache, row, end = where[id(leader)]
                start = end - len(leader.token_ids)
                kv = [
                    (layer.keys[row : row + 1, :, start:end], layer.values[row : row + 1, :, start:end])
                    for layer in cache.layers
                ]
                request.prefix, request.reuse = PrefixEntry(leader.token_ids, kv, self._epoch), shared
            parts += self._prefill_groups([request for request, _, _ in later])
        self._merge(parts)

    def _start(self, request: _Request, now: float) -> None:
        """Stamp a request as admitted now, under the current weights; drop a prefix a pause has made stale."""
        request.admitted_at, request.policy_version, request.epoch = now, self.policy_version, self._epoch
        if request.prefix is not None and request.prefix.epoch != self._epoch:  # a pause since admission
            request.prefix, request.reuse = None, 0

    def _packable(self, joining: list[_Request]) -> bool:
        """Whether the joining prompts go into the rows' decode pass (`ptrain.engine.packed`): not when
        one would reuse another's prompt (they prefill in two rounds) or they feed more than a prefill may."""
        if not self.packed_prefill or sum(len(r.token_ids) - r.reuse for r in joining) > PREFILL_TOKENS:
            return False
        return all(self._leader(r, joining[:i])[0] is None for i, r in enumerate(joining))

    def _step_packed(self, joining: list[_Request]) -> None:
        """One pass: a token for every running row and the joining prompts' prefill; then they join."""
        now = time.monotonic()
        slots = self._slots
        slots.step_cache()  # a column for every row's new token
        self._count_step()
        ids, pos, prompts = [self._next], [slots.lengths], []
        start = slots.rows
        for request in joining:
            self._start(request, now)
            fed = request.token_ids[request.reuse :]
            reused = request.prefix.kv if request.reuse else None
            prompts.append(packed.Prompt(start, start + len(fed), reused, request.reuse))
            ids.append(torch.tensor(fed, device=self.device))
            pos.append(torch.arange(request.reuse, len(request.token_ids), device=self.device))
            start += len(fed)
        plan = packed.Plan(slots, prompts)
        keep = torch.tensor([*range(slots.rows), *(p.end - 1 for p in prompts)], device=self.device)
        unused = torch.ones((1, 1, 1, 1), dtype=torch.bool, device=self.device)  # a 4D mask: none is built
        with packed.packed_pass(self._config):
            out = self.module(
                input_ids=torch.cat(ids)[None],
                attention_mask=unused,
                position_ids=torch.cat(pos)[None],
                use_cache=True,
                logits_to_keep=keep,
                ptrain_plan=plan,
                **{self._cache_arg: packed.packed_cache(plan, len(slots.keys))},
            )
        logits = out.logits[0].float()
        slots.advance()
        self._next = self._record(self._rows, logits[: plan.rows])
        first = self._record(joining, logits[plan.rows :])
        entries = []
        for request, prompt in zip(joining, prompts, strict=True):
            request.prefix = None
            slots.add(prompt.kv, 0, len(request.token_ids))
            entries.append(self._entry(slots.rows - 1, request))
        with self._cond:
            self._hit_tokens += sum(r.reuse for r in joining)
            self._prefill_tokens += sum(len(r.token_ids) - r.reuse for r in joining)
        self._join(joining, [first], entries)

    def _leader(self, request: _Request, first: list[_Request]) -> tuple[_Request | None, int]:
        """The request in `first` whose prompt would give `request` at least `min_prefix_reuse` more tokens."""
        least = request.reuse + self.min_prefix_reuse
        leader, longest = None, 0
        for other in first if self.prefix_cache and least < len(request.token_ids) else ():
            if other.token_ids[:least] == request.token_ids[:least]:
                shared = min(common_prefix(other.token_ids, request.token_ids), len(request.token_ids) - 1)
                if shared > longest:
                    leader, longest = other, shared
        return leader, longest

    def _prefill_groups(
        self, requests: list[_Request]
    ) -> list[tuple[list[_Request], DynamicCache, torch.Tensor, torch.Tensor]]:
        groups = prefill_groups([len(r.token_ids) - r.reuse for r in requests])
        return [self._prefill_group([requests[i] for i in group]) for group in groups]

    def _prefill_group(
        self, requests: list[_Request]
    ) -> tuple[list[_Request], DynamicCache, torch.Tensor, torch.Tensor]:
        """One forward pass over rows [left pad][reused prefix][fed tokens]: (requests, cache, mask, first tokens)."""
        fed = max(len(r.token_ids) - r.reuse for r in requests)  # a row that reuses more re-feeds, not pads
        reused = [max(0, len(r.token_ids) - fed) for r in requests]
        width = max(reused)
        ids = torch.zeros((len(requests), fed), dtype=torch.long)
        mask = torch.zeros((len(requests), width + fed), dtype=torch.long)
        for row, (request, n) in enumerate(zip(requests, reused, strict=True)):
            ids[row, fed - len(request.token_ids) + n :] = torch.tensor(request.token_ids[n:])
            mask[row, width - n : width] = 1
            mask[row, width + fed - len(request.token_ids) + n :] = 1
        ids, mask = ids.to(self.device), mask.to(self.device)
        pos = (mask.cumsum(dim=1) - 1).clamp(min=0)[:, width:]
        cache = DynamicCache(config=self._config)
        if width:
            hits = [(row, r.prefix, n) for row, (r, n) in enumerate(zip(requests, reused, strict=True)) if n]
            for index, layer in enumerate(cache.layers):
                template = hits[0][1].kv[index][0]
                keys = template.new_zeros((len(requests), template.shape[1], width, template.shape[3]))
                values = torch.zeros_like(keys)
                for row, prefix, n in hits:
                    keys[row, :, width - n :] = prefix.kv[index][0][0, :, :n]
                    values[row, :, width - n :] = prefix.kv[index][1][0, :, :n]
                layer.update(keys, values)
        tokens = self._record(requests, self._forward(ids, mask, pos, cache, logits_to_keep=1))
        for request in requests:
            request.prefix = None  # the entry may be evicted now; its tensors go with it
        with self._cond:
            self._hit_tokens += sum(reused)
            self._prefill_tokens += sum(len(r.token_ids) for r in requests) - sum(reused)
        return requests, cache, mask, tokens

    def _merge(self, parts: list[tuple[list[_Request], DynamicCache, torch.Tensor, torch.Tensor]]) -> None:
        """Give each prefilled row a slot: its own KV is copied in, nothing else moves (see `ptrain.engine.slots`)."""
        entries = []
        for requests, cache, mask, _ in parts:
            kv = [(layer.keys, layer.values) for layer in cache.layers]
            for row, (request, length) in enumerate(zip(requests, mask.sum(dim=1).tolist(), strict=True)):
                self._slots.add(kv, row, length)
                entries.append(self._entry(self._slots.rows - 1, request))  # its prompt: one token sampled, none fed
        self._join([r for requests, *_ in parts for r in requests], [tokens for *_, tokens in parts], entries)

    def _join(self, requests: list[_Request], first: list[torch.Tensor], entries: list[PrefixEntry | None]) -> None:
        """The prefilled requests (in slot order, their first tokens in `first`) become running rows."""
        self._next = torch.cat([self._next, *first])
        with self._cond:
            self._rows = self._rows + requests
            self._stats.peak_batch = max(self._stats.peak_batch, len(self._rows))
            self._store(entries)  # the prompts, for requests that start the same way while these run

    def _record(self, requests: list[_Request], logits: torch.Tensor) -> torch.Tensor:
        """Sample a token for each request, append it, and mark the requests it finishes."""
        tokens, logprobs = sample(logits, [r.sampling for r in requests], [r.generator for r in requests])
        for request, token, logprob in zip(requests, tokens.tolist(), logprobs.tolist(), strict=True):
            request.tokens.append(token)
            request.logprobs.append(logprob)
            if token in request.sampling.stop_token_ids:
                request.finish_reason = "stop"
            elif len(request.tokens) >= request.max_new_tokens:
                request.finish_reason = "length"
        with self._cond:
            self._stats.generated_tokens += len(requests)
        return tokens

    def _retire(self) -> None:
        """Drop finished and cancelled rows (then the columns no row uses any more) and answer the finished."""
        keep = [row for row, r in enumerate(self._rows) if not (r.finish_reason or r.cancelled)]
        if len(keep) == len(self._rows):
            return
        gone = [r for r in self._rows if r.finish_reason and not r.cancelled]
        entries = [self._entry(row, r) for row, r in enumerate(self._rows) if row not in keep]
        order = self._slots.keep(keep)  # leaving rows' slots taken by rows from the end
        self._next = self._next[torch.tensor(order, dtype=torch.long, device=self.device)]
        with self._cond:
            self._rows = [self._rows[row] for row in order]
            self._store(entries)
        now = time.monotonic()
        for r in gone:
            r.settle(
                Completion(
                    token_ids=tuple(r.tokens),
                    logprobs=tuple(r.logprobs),
                    finish_reason=r.finish_reason,
                    policy_version=r.policy_version,
                    prompt_tokens=len(r.token_ids),
                    queued_s=r.admitted_at - r.queued_at,
                    generate_s=now - r.admitted_at,
                )
            )

    def _store(self, entries: list[PrefixEntry | None]) -> None:
        """Keep the entries in the prefix cache, within the budget the running rows leave (caller holds `_cond`)."""
        limit = self.kv_budget_tokens - kv_peak(self._planned())
        for entry in entries:
            if entry is not None:
                self._prefix.store(entry, limit)

    def _entry(self, row: int, request: _Request) -> PrefixEntry | None:
        """A copy of a row's KV: its prompt and completion but the last token (no KV yet); None if not worth keeping."""
        fed = len(request.token_ids) + len(request.tokens) - 1
        if not self.prefix_cache or request.epoch != self._epoch or fed < self.min_prefix_reuse:
            return None
        return PrefixEntry((request.token_ids + request.tokens)[:fed], self._slots.row(row, fed), request.epoch)
