"""Which waiting requests the hf engine starts next: admission by KV budget, first come first served.

Why a budget. A batch costs rows x width, the width being the longest row's cache. For the running
rows plus the candidates the engine computes the worst future peak of rows x width if no row stops
early (`kv_peak`), and admits a candidate only while that peak plus the prefix cache's entries
(`ptrain.engine.prefix_cache`) stays within `kv_budget_tokens`; so no mix of long episodes can run
out of memory. (The slots round rows and columns up to whole blocks, and a prefill holds its own
cache for a moment; the default budget, a quarter of free RAM or half of free GPU memory
(`default_kv_budget_bytes`), leaves room for that; the prefill feeds at most `PREFILL_TOKENS` padded
tokens a step, not counting those the prefix cache holds.) A request whose own prompt +
max_new_tokens exceeds the budget can never run and fails at once.

Order: first come, first served, but a request that does not fit may be overtaken by later ones that
do; once `max_overtakes` requests have passed it, nothing behind it is admitted until it fits (the
batch drains, so it will). One big request neither starves nor holds up small ones for long.

The admitted are prefilled in groups of similar new-token counts (`prefill_groups`): a group feeds
every row as many tokens as its longest needs, so its rows should need about as many.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence

import torch

from ptrain.engine.hf_request import Request
from ptrain.engine.prefix_cache import PrefixCache, PrefixEntry

CPU_MEMORY_SHARE = 0.25  # of MemAvailable, for the default KV budget
GPU_MEMORY_SHARE = 0.5  # of free device memory
PREFILL_TOKENS = 8192  # most padded tokens fed in one step's prefill (a longer prompt goes alone)
SHARED_PREFILL = 2  # a prefill group's longest new part is at most this times its shortest


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


def admit(
    waiting: Iterable[Request],
    planned: list[tuple[int, int]],
    running: int,
    prefix_cache: PrefixCache,
    match: Callable[[list[int]], tuple[PrefixEntry | None, int]],
    *,
    max_batch: int,
    max_overtakes: int,
    budget: int,
) -> list[Request]:
    """The waiting requests (in queue order) that fit beside the `running` rows now, as the module docstring says.

    `planned` is the running rows as `kv_peak` takes them; `match` gives the prefix entry a prompt would
    reuse and for how many tokens. Each chosen request gets its `prefix` and `reuse`; each one passed by
    a later one counts it in `overtaken`.
    """
    chosen: list[Request] = []
    passed: list[Request] = []
    for request in waiting:
        if running + len(chosen) >= max_batch:
            break
        trial = [*planned, (len(request.token_ids), request.max_new_tokens)]
        peak = kv_peak(trial)
        prefix, reuse = match(request.token_ids) if peak <= budget else (None, 0)
        longest = max([len(r.token_ids) - r.reuse for r in chosen] + [len(request.token_ids) - reuse])
        if chosen and (len(chosen) + 1) * longest > PREFILL_TOKENS:
            break
        keep = [r.prefix for r in chosen]
        room = prefix_cache.make_room(budget - peak, [*keep, prefix])
        if not room and prefix is not None:  # its entry itself does not fit beside it: prefill it all
            prefix, reuse = None, 0
            room = prefix_cache.make_room(budget - peak, keep)
        if room:
            planned = trial
            chosen.append(request)
            request.prefix, request.reuse = prefix, reuse
            if prefix is not None:
                prefix_cache.touch(prefix)
            for earlier in passed:
                earlier.overtaken += 1
        elif request.overtaken >= max_overtakes:
            break  # it has waited long enough: nothing behind it goes first
        else:
            passed.append(request)
    return chosen


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
