"""The in-process transformers engine: continuous batching over a model the trainer can share.

In-process because the trainer and the engine then hold the same weights: a policy update is an
in-place change (a LoRA step) between two decode steps, not a weight transfer.

How it batches. One worker thread owns the running batch: a `DynamicCache` whose rows are
right-aligned (padded on the left), a 0/1 attention mask and per-row position ids. Between decode
steps the worker

  1. admits waiting requests (below), prefills them together, left-padded, and merges their cache
     into the batch (both padded on the left to a common width, then concatenated along the batch);
  2. decodes one token for every running row;
  3. removes finished and cancelled rows (index-selecting the cache) and trims the left columns that
     are padding in every row left.

So a short request leaves as soon as it is done and a new one joins within one step. torch releases
the GIL during forward passes, so the asyncio loops that call `generate` keep running; results go
back to them with `loop.call_soon_threadsafe`.

Admission by KV budget. Right-aligned rows cost rows x width, the width being the longest row's
cache, padding included. For the running rows plus the candidates the engine computes the worst
future peak of rows x width if no row stops early (`kv_peak`), and admits a candidate only while that
peak stays within `kv_budget_tokens`; so no mix of long episodes can run out of memory. (Merging
copies the cache for a moment; the default budget, a quarter of free RAM or half of free GPU memory,
leaves room for that; so does the prefill, which takes at most `PREFILL_TOKENS` padded prompt tokens
a step.) A request whose own prompt + max_new_tokens exceeds the budget can never run and fails at
once.

Order: first come, first served, but a request that does not fit may be overtaken by later ones that
do; once `max_overtakes` requests have passed it, nothing behind it is admitted until it fits (the
batch drains, so it will). One big request neither starves nor holds up small ones for long.

Policy version. `update_weights(fn, version)` (or `with engine.paused():`) runs between decode steps,
while no forward pass is in flight. A completion's `policy_version` is the version its first token was
sampled with; a sequence running across an update goes on with the new weights (and the cache the old
ones wrote), as in-flight updates do, and its logprobs are those it was actually sampled from.
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

from ptrain.engine.base import Completion, EngineStats, Sampling
from ptrain.errors import ConfigError, EngineError

CPU_MEMORY_SHARE = 0.25  # of MemAvailable, for the default KV budget
GPU_MEMORY_SHARE = 0.5  # of free device memory
PREFILL_TOKENS = 8192  # most padded prompt tokens prefilled in one step (a longer prompt goes alone)

log = logging.getLogger(__name__)


def kv_peak(rows: Sequence[tuple[int, int]]) -> int:
    """The most KV slots (rows x width) a right-aligned batch will hold if no row stops early.

    Each row is (cached, left): tokens in its cache now, tokens it may still generate. After s steps a
    row still alive (s <= left) holds cached + s; the width is that of the longest live row, so the
    peak falls on the last step of some row: scan rows by how long they live, longest first.
    """
    peak = widest = 0
    for alive, (cached, left) in enumerate(sorted(rows, key=lambda row: -row[1]), start=1):
        widest = max(widest, cached)
        peak = max(peak, alive * (widest + left))
    return peak


def sample(
    logits: torch.Tensor, samplings: Sequence[Sampling], generators: Sequence[torch.Generator | None]
) -> tuple[torch.Tensor, torch.Tensor]:
    """One token per row of `logits` [rows, vocab] and its logprob under logits / temperature.

    Temperature 0 is greedy with the untempered logprob; top-p filters after the logprob is taken.
    Each row draws from its own generator, so what else is in the batch does not change its sample.
    """
    temperatures = torch.tensor([s.temperature or 1.0 for s in samplings], device=logits.device)
    logprobs = torch.log_softmax(logits / temperatures[:, None], dim=-1)
    tokens = logits.argmax(dim=-1)
    for row, (s, generator) in enumerate(zip(samplings, generators, strict=True)):
        if s.temperature > 0:
            probs = logprobs[row].exp()
            if s.top_p < 1:
                probs = top_p_filter(probs, s.top_p)
            tokens[row] = torch.multinomial(probs, 1, generator=generator)[0]
    return tokens, logprobs.gather(1, tokens[:, None])[:, 0]


def top_p_filter(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    """Zero the least likely tokens outside the smallest set whose mass reaches top_p."""
    ordered, order = probs.sort(descending=True)
    ordered[ordered.cumsum(0) - ordered >= top_p] = 0  # the mass before them already reached top_p
    return torch.zeros_like(probs).scatter_(0, order, ordered)


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


def kv_bytes_per_token(config, dtype: torch.dtype) -> int:
    """Keys and values of every layer for one token: 2 x layers x kv heads x head dim x dtype size."""
    heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    return 2 * config.num_hidden_layers * heads * head_dim * dtype.itemsize


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


def _left_pad(x: torch.Tensor, width: int, dim: int) -> torch.Tensor:
    missing = width - x.shape[dim]
    if missing == 0:
        return x
    shape = list(x.shape)
    shape[dim] = missing
    return torch.cat([x.new_zeros(shape), x], dim=dim)


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
    ):
        base = module.get_base_model() if hasattr(module, "get_base_model") else module
        config = base.config.get_text_config()
        if any(type(layer) is not DynamicLayer for layer in DynamicCache(config=base.config).layers):
            raise ConfigError(
                f"{type(base).__name__} uses sliding-window or non-attention layers; the hf engine runs full-attention models only"
            )
        if max_batch < 1 or max_overtakes < 0:
            raise ConfigError(f"max_batch {max_batch} must be >= 1 and max_overtakes {max_overtakes} >= 0")
        self.module = module.eval()
        self.model = name or str(getattr(base.config, "_name_or_path", "") or type(base).__name__)
        self.policy_version = policy_version
        self.context_window = int(config.max_position_embeddings)
        self.device = next(base.parameters()).device
        self.max_batch, self.max_overtakes = max_batch, max_overtakes
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
        self._cache: DynamicCache | None = None
        self._mask = self._pos = self._next = torch.empty(0)
        self._closed, self._failure, self._pausers = False, EngineError("engine closed"), 0
        self._stats = EngineStats()
        self._steps = 0
        self._thread = threading.Thread(target=self._work, name="ptrain-hf-engine", daemon=True)
        self._thread.start()

    @classmethod
    def load(
        cls, path: str | Path, device: str | None = None, dtype: str | torch.dtype | None = None, **options
    ) -> HFEngine:
        """Load a checkpoint directory onto `device` (CUDA when there is one) in `dtype` (the checkpoint's)."""
        from transformers import AutoModelForCausalLM

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

        Running sequences keep their cache and go on after it. Blocking: from an asyncio loop, run it in
        a thread (`await asyncio.to_thread(engine.update_weights, fn, version)`).
        """
        with self._cond:
            self._pausers += 1
        try:
            with self._step_lock:
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
        """Counters since the start; `requests` and `prompt_tokens` count admitted requests."""
        with self._cond:
            held = len(self._rows) * (self._mask.shape[1] if self._rows else 0)
            extra = {"kv_budget_tokens": self.kv_budget_tokens, "kv_held_tokens": held, "decode_steps": self._steps}
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
            for request in doomed:
                request.settle(self._closed_error())
            self._rows, self._joining, self._cache = [], [], None

    def _admit(self) -> list[_Request]:
        """Pop the waiting requests that fit now (caller holds `_cond`); see the module docstring."""
        self._waiting = deque(r for r in self._waiting if not r.cancelled)
        planned = [(len(r.token_ids) + len(r.tokens), r.max_new_tokens - len(r.tokens)) for r in self._rows]
        chosen: list[_Request] = []
        passed: list[_Request] = []
        for request in self._waiting:
            longest = max(len(r.token_ids) for r in [*chosen, request])
            if len(self._rows) + len(chosen) >= self.max_batch or (
                chosen and (len(chosen) + 1) * longest > PREFILL_TOKENS
            ):
                break
            trial = [*planned, (len(request.token_ids), request.max_new_tokens)]
            if kv_peak(trial) <= self.kv_budget_tokens:
                planned = trial
                chosen.append(request)
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

    def _step(self) -> None:
        if self._joining:
            self._prefill(self._joining)
            self._joining = []
        self._retire()
        if self._rows:
            self._mask = torch.cat([self._mask, self._mask.new_ones((len(self._rows), 1))], dim=1)
            logits = self._forward(self._next[:, None], self._mask, self._pos[:, None], self._cache)
            self._pos = self._pos + 1
            self._next = self._record(self._rows, logits)
            self._steps += 1
            self._retire()

    def _forward(
        self, ids: torch.Tensor, mask: torch.Tensor, pos: torch.Tensor, cache: DynamicCache, **kwargs
    ) -> torch.Tensor:
        out = self.module(
            input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True, **{self._cache_arg: cache}, **kwargs
        )
        return out.logits[:, -1, :].float()

    def _prefill(self, requests: list[_Request]) -> None:
        """Run the new prompts together, left-padded, sample their first tokens, merge them into the batch."""
        now = time.monotonic()
        width = max(len(r.token_ids) for r in requests)
        ids = torch.zeros((len(requests), width), dtype=torch.long)
        mask = torch.zeros((len(requests), width), dtype=torch.long)
        for row, request in enumerate(requests):
            request.admitted_at, request.policy_version = now, self.policy_version
            ids[row, width - len(request.token_ids) :] = torch.tensor(request.token_ids)
            mask[row, width - len(request.token_ids) :] = 1
        ids, mask = ids.to(self.device), mask.to(self.device)
        pos = (mask.cumsum(dim=1) - 1).clamp(min=0)
        cache = DynamicCache(config=self._config)
        tokens = self._record(requests, self._forward(ids, mask, pos, cache, logits_to_keep=1))
        if not self._rows:
            self._cache, self._mask, self._pos, self._next = cache, mask, mask.sum(dim=1), tokens
        else:
            width = max(width, self._mask.shape[1])
            for old, new in zip(self._cache.layers, cache.layers, strict=True):
                old.keys = torch.cat([_left_pad(old.keys, width, -2), _left_pad(new.keys, width, -2)])
                old.values = torch.cat([_left_pad(old.values, width, -2), _left_pad(new.values, width, -2)])
            self._mask = torch.cat([_left_pad(self._mask, width, 1), _left_pad(mask, width, 1)])
            self._pos = torch.cat([self._pos, mask.sum(dim=1)])
            self._next = torch.cat([self._next, tokens])
        with self._cond:
            self._rows = self._rows + requests
            self._stats.peak_batch = max(self._stats.peak_batch, len(self._rows))

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
        if keep:
            index = torch.tensor(keep, device=self.device)
            mask = self._mask.index_select(0, index)
            start = int(mask.any(dim=0).int().argmax())  # the first column some row still uses
            for layer in self._cache.layers:
                layer.keys = layer.keys.index_select(0, index)[:, :, start:]
                layer.values = layer.values.index_select(0, index)[:, :, start:]
            self._mask, self._pos, self._next = mask[:, start:], self._pos[index], self._next[index]
        with self._cond:
            self._rows = [self._rows[row] for row in keep]
            self._cache = self._cache if keep else None
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
