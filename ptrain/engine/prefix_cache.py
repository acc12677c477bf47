"""The hf engine's prefix cache: finished sequences' KV, for the requests that start the same way.

Why (as vLLM's and SGLang's automatic prefix caching; `prefix_cache=False` turns it off). An agent's
next turn is its last prompt + completion + a tool result, and a taskpack's episodes share one
system prompt, so most of a prompt was often run before. When a row is prefilled the engine keeps a
copy of its prompt's KV as a `PrefixEntry`, so episodes that arrive while it runs reuse it; when the
row leaves the batch (finished or cancelled) that entry gives way to one for all the tokens it fed
(prompt + completion but the last token, which has no KV yet). Attention is causal, so an entry's
first L columns are valid for any sequence that starts with the same L tokens: on admission a
request takes the entry with the longest common prefix (if at least `min_prefix_reuse` tokens, and
always leaving one token to feed for the logits) and only the rest of its prompt is prefilled,
positions going on from there (`ptrain.engine.hf_batch`).

  * Entries count against `kv_budget_tokens` (`ptrain.engine.admission`): a candidate is admitted
    only if the batch's peak plus the entries it needs fit, evicting least recently used entries to
    make room; storing one evicts the same way (or skips it). An entry that the new one extends (the
    previous turn of the same episode) is dropped; one that extends the new one is kept instead. At
    most `prefix_cache_entries` are kept.
  * KV written by old weights must not start a new sequence: every pause (`paused`, `update_weights`)
    clears the entries and bumps an epoch, and a row prefilled before the last pause is not stored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import torch


def common_prefix(a: list[int], b: list[int]) -> int:
    """How many leading tokens two id lists share (a binary search over slice comparisons, run in C)."""
    low, high = 0, min(len(a), len(b))
    if a[:high] == b[:high]:
        return high
    while high - low > 1:  # a[:low] == b[:low] and a[:high] != b[:high]
        middle = (low + high) // 2
        low, high = (middle, high) if a[:middle] == b[:middle] else (low, middle)
    return low


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
