"""The hf engine's running batch: its requests, their KV slots, and the passes that prefill, step and retire them.

Apart from the engine (`ptrain.engine.hf`) because this is what the worker thread does between two
admissions, while the engine is what callers see: the queue, pauses, stats. One worker thread owns
the batch: a `SlotKV` (`ptrain.engine.slots`) that keeps each row's keys and values in a
preallocated slot, left-aligned, so a decode step writes every row's new token in place at the row's
own length and a row joins or leaves without the batch's cache being copied. Each `Batch.step`

  1. prefills the requests just admitted (`ptrain.engine.admission`) together (left-padded, in a
     cache of their own) and copies each one's KV into a free slot;
  2. decodes one token for every running row;
  3. removes finished and cancelled rows: the last running rows move into the slots they free.

When rows are running, steps 1 and 2 are one forward pass (`ptrain.engine.packed`): the rows' next
tokens and the new prompts' tokens go in as one packed sequence, so a prompt arriving mid-batch costs
its tokens' compute but not a second pass over the weights (`packed_prefill=False` turns this off;
only models on sdpa attention pack). Prompts that share a start they would reuse from each other
still prefill apart, in two rounds.

How new prompts are fed (in groups, over the prefixes they reuse, in two rounds, or packed into a
decode pass) is in `ptrain.engine.prefill`; a row's prompt KV is stored in the prefix cache (`ptrain.engine.prefix_cache`)
when it joins, and all it fed when it leaves.
"""

from __future__ import annotations

import inspect
import threading
import time

import torch
from transformers import DynamicCache

from ptrain.engine import packed
from ptrain.engine.admission import PREFILL_TOKENS, kv_peak, kv_shape, prefill_groups
from ptrain.engine.base import EngineStats
from ptrain.engine.hf_request import Request
from ptrain.engine.prefill import group_inputs, leader_of, packed_inputs, prompt_kv
from ptrain.engine.prefix_cache import PrefixCache, PrefixEntry
from ptrain.engine.sampling import sample
from ptrain.engine.slots import SlotKV

Part = tuple[list[Request], DynamicCache, torch.Tensor, torch.Tensor]  # a prefill: requests, cache, mask, first tokens


class Batch:
    """The running rows and their slots (see the module docstring); used by the engine's worker thread only.

    `rows`, the counters, the prefix cache and `stats` are also read by the engine's callers: they change
    under `cond`. `epoch` is the weights epoch, which the engine bumps while paused.
    """

    def __init__(
        self,
        module: torch.nn.Module,
        base: torch.nn.Module,
        device: torch.device,
        prefix: PrefixCache,
        cond: threading.Condition,
        stats: EngineStats,
        *,
        kv_budget_tokens: int,
        prefix_cache: bool,
        min_prefix_reuse: int,
        packed_prefill: bool,
    ):
        self.module, self.device, self.kv_budget_tokens = module, device, kv_budget_tokens
        self.prefix_cache, self.min_prefix_reuse, self.packed_prefill = prefix_cache, min_prefix_reuse, packed_prefill
        self.joining: list[Request] = []  # admitted, they join in the next step
        self.rows: list[Request] = []  # the running batch, one per cache row
        self.slots = SlotKV(*kv_shape(base.config.get_text_config()), base.dtype, device)  # row i holds rows[i]
        self.next = torch.empty(0, dtype=torch.long, device=device)  # each row's last token, fed next step
        self.epoch = 0  # bumped by every pause: the weights may have changed
        self.steps = self.hit_tokens = self.prefill_tokens = self.packed_steps = 0
        self.decode_cells = self.decode_context = 0  # rows x width attended, and the rows' own tokens of it
        self._config = base.config
        self._cache_arg = "cache" if "cache" in inspect.signature(base.forward).parameters else "past_key_values"
        self._prefix, self._cond, self._stats = prefix, cond, stats
        self._policy_version = 0  # the engine's, for the step running

    def match(self, ids: list[int]) -> tuple[PrefixEntry | None, int]:
        """The entry to reuse and for how many tokens: at least `min_prefix_reuse`, leaving one to feed."""
        prefix, shared = self._prefix.match(ids) if self.prefix_cache else (None, 0)
        shared = min(shared, len(ids) - 1)
        return (prefix, shared) if shared >= self.min_prefix_reuse else (None, 0)

    def planned(self) -> list[tuple[int, int]]:
        """The running rows as `kv_peak` takes them: (tokens cached, tokens still to generate)."""
        return [(len(r.token_ids) + len(r.tokens), r.max_new_tokens - len(r.tokens)) for r in self.rows]

    def clear(self) -> None:
        """Forget every row (the engine has answered them)."""
        self.rows, self.joining = [], []
        self.slots.keep([])

    def step(self, policy_version: int) -> None:
        """Prefill the joining requests, decode a token for every row, retire the finished (see the module docstring)."""
        self._policy_version = policy_version
        # the joining stay in self.joining until they are rows, so a failed pass settles them too
        if self.joining and self.rows and self._packable(self.joining):
            self._step_packed(self.joining)
            self.joining = []
            self.packed_steps += 1
            self._retire()
            return
        if self.joining:
            self._prefill(self.joining)
            self.joining = []
        self._retire()
        if self.rows:
            slots = self.slots
            cache = slots.step_cache()
            self._count_step()
            logits = self._forward(self.next[:, None], slots.mask(), slots.lengths[:, None], cache)
            slots.advance()
            self.next = self._record(self.rows, logits)
            self._retire()

    def _count_step(self) -> None:
        """Count a decode step and what its attention covers: rows x width cells, of which the rows' own tokens."""
        slots = self.slots
        self.steps += 1
        self.decode_cells += slots.rows * slots.width
        self.decode_context += sum(slots.host_lengths) + slots.rows

    def _forward(
        self, ids: torch.Tensor, mask: torch.Tensor, pos: torch.Tensor, cache: DynamicCache, **kwargs
    ) -> torch.Tensor:
        out = self.module(
            input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True, **{self._cache_arg: cache}, **kwargs
        )
        return out.logits[:, -1, :].float()

    def _prefill(self, requests: list[Request]) -> None:
        """Run the new prompts (past what they reuse), sample their first tokens, merge them into the batch."""
        now = time.monotonic()
        first: list[Request] = []
        later: list[tuple[Request, Request, int]] = []  # a request, the one before it that it starts like, how much
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
                kv = prompt_kv(*where[id(leader)], len(leader.token_ids))
                request.prefix, request.reuse = PrefixEntry(leader.token_ids, kv, self.epoch), shared
            parts += self._prefill_groups([request for request, _, _ in later])
        self._merge(parts)

    def _start(self, request: Request, now: float) -> None:
        """Stamp a request as admitted now, under the current weights; drop a prefix a pause has made stale."""
        request.admitted_at, request.policy_version, request.epoch = now, self._policy_version, self.epoch
        if request.prefix is not None and request.prefix.epoch != self.epoch:  # a pause since admission
            request.prefix, request.reuse = None, 0

    def _packable(self, joining: list[Request]) -> bool:
        """Whether the joining prompts go into the rows' decode pass (`ptrain.engine.packed`): not when
        one would reuse another's prompt (they prefill in two rounds) or they feed more than a prefill may."""
        if not self.packed_prefill or sum(len(r.token_ids) - r.reuse for r in joining) > PREFILL_TOKENS:
            return False
        return all(self._leader(r, joining[:i])[0] is None for i, r in enumerate(joining))

    def _step_packed(self, joining: list[Request]) -> None:
        """One pass: a token for every running row and the joining prompts' prefill; then they join."""
        now = time.monotonic()
        slots = self.slots
        slots.step_cache()  # a column for every row's new token
        self._count_step()
        for request in joining:
            self._start(request, now)
        plan, ids, pos, keep = packed_inputs(self.next, slots, joining, self.device)
        unused = torch.ones((1, 1, 1, 1), dtype=torch.bool, device=self.device)  # a 4D mask: none is built
        with packed.packed_pass(self._config):
            out = self.module(
                input_ids=ids,
                attention_mask=unused,
                position_ids=pos,
                use_cache=True,
                logits_to_keep=keep,
                ptrain_plan=plan,
                **{self._cache_arg: packed.packed_cache(plan, len(slots.keys))},
            )
        logits = out.logits[0].float()
        slots.advance()
        self.next = self._record(self.rows, logits[: plan.rows])
        first = self._record(joining, logits[plan.rows :])
        entries = []
        for request, prompt in zip(joining, plan.prompts, strict=True):
            request.prefix = None
            slots.add(prompt.kv, 0, len(request.token_ids))
            entries.append(self._entry(slots.rows - 1, request))
        with self._cond:
            self.hit_tokens += sum(r.reuse for r in joining)
            self.prefill_tokens += sum(len(r.token_ids) - r.reuse for r in joining)
        self._join(joining, [first], entries)

    def _leader(self, request: Request, first: list[Request]) -> tuple[Request | None, int]:
        """The request in `first` whose prompt would give `request` at least `min_prefix_reuse` more tokens."""
        return leader_of(request, first, self.min_prefix_reuse) if self.prefix_cache else (None, 0)

    def _prefill_groups(self, requests: list[Request]) -> list[Part]:
        groups = prefill_groups([len(r.token_ids) - r.reuse for r in requests])
        return [self._prefill_group([requests[i] for i in group]) for group in groups]

    def _prefill_group(self, requests: list[Request]) -> Part:
        """One forward pass over rows [left pad][reused prefix][fed tokens]: (requests, cache, mask, first tokens)."""
        ids, mask, pos, cache, reused = group_inputs(requests, self.device, self._config)
        tokens = self._record(requests, self._forward(ids, mask, pos, cache, logits_to_keep=1))
        for request in requests:
            request.prefix = None  # the entry may be evicted now; its tensors go with it
        with self._cond:
            self.hit_tokens += sum(reused)
            self.prefill_tokens += sum(len(r.token_ids) for r in requests) - sum(reused)
        return requests, cache, mask, tokens

    def _merge(self, parts: list[Part]) -> None:
        """Give each prefilled row a slot: its own KV is copied in, nothing else moves (see `ptrain.engine.slots`)."""
        entries = []
        for requests, cache, mask, _ in parts:
            kv = [(layer.keys, layer.values) for layer in cache.layers]
            for row, (request, length) in enumerate(zip(requests, mask.sum(dim=1).tolist(), strict=True)):
                self.slots.add(kv, row, length)
                entries.append(self._entry(self.slots.rows - 1, request))  # its prompt: one token sampled, none fed
        self._join([r for requests, *_ in parts for r in requests], [tokens for *_, tokens in parts], entries)

    def _join(self, requests: list[Request], first: list[torch.Tensor], entries: list[PrefixEntry | None]) -> None:
        """The prefilled requests (in slot order, their first tokens in `first`) become running rows."""
        self.next = torch.cat([self.next, *first])
        with self._cond:
            self.rows = self.rows + requests
            self._stats.peak_batch = max(self._stats.peak_batch, len(self.rows))
            self._store(entries)  # the prompts, for requests that start the same way while these run

    def _record(self, requests: list[Request], logits: torch.Tensor) -> torch.Tensor:
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
        keep = [row for row, r in enumerate(self.rows) if not (r.finish_reason or r.cancelled)]
        if len(keep) == len(self.rows):
            return
        gone = [r for r in self.rows if r.finish_reason and not r.cancelled]
        entries = [self._entry(row, r) for row, r in enumerate(self.rows) if row not in keep]
        order = self.slots.keep(keep)  # leaving rows' slots taken by rows from the end
        self.next = self.next[torch.tensor(order, dtype=torch.long, device=self.device)]
        with self._cond:
            self.rows = [self.rows[row] for row in order]
            self._store(entries)
        now = time.monotonic()
        for r in gone:
            r.settle(r.completion(now))

    def _store(self, entries: list[PrefixEntry | None]) -> None:
        """Keep the entries in the prefix cache, within the budget the running rows leave (caller holds `cond`)."""
        limit = self.kv_budget_tokens - kv_peak(self.planned())
        for entry in entries:
            if entry is not None:
                self._prefix.store(entry, limit)

    def _entry(self, row: int, request: Request) -> PrefixEntry | None:
        """A copy of a row's KV: its prompt and completion but the last token (no KV yet); None if not worth keeping."""
        fed = len(request.token_ids) + len(request.tokens) - 1
        if not self.prefix_cache or request.epoch != self.epoch or fed < self.min_prefix_reuse:
            return None
        return PrefixEntry((request.token_ids + request.tokens)[:fed], self.slots.row(row, fed), request.epoch)
