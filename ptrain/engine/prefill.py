"""How the hf engine feeds new prompts: the inputs of a prefill pass, or of a decode pass they join.

Apart from the batch (`ptrain.engine.hf_batch`) because these are pure: requests in, tensors out, no
state; the batch runs the passes and keeps what they give.

  * Rows are prefilled in groups of similar new-token counts (`prefill_groups`). A group feeds every row
    the same number of tokens, N, the most any row needs; a row that reuses more re-feeds the last few
    of its cached tokens instead of padding (the same compute), so each row is [left pad][reused
    prefix][fed tokens], contiguous and right-aligned in the prefill's cache, with positions from
    the mask (`group_inputs`). Each row then takes a slot.
  * Requests admitted together that share a start no entry holds yet (a GRPO group, episodes starting
    with one system prompt) do not all prefill it: the first (the others' leader, `leader_of`) is prefilled in a first
    round and the rest in a second round reusing its KV.
  * When rows are running and no joining prompt has a leader, the prompts go into the rows' decode
    pass instead, as one packed sequence (`packed_inputs`, `ptrain.engine.packed`).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from transformers import DynamicCache

from ptrain.engine import packed
from ptrain.engine.hf_request import Request
from ptrain.engine.prefix_cache import common_prefix
from ptrain.engine.slots import SlotKV


def leader_of(request: Request, first: Sequence[Request], min_reuse: int) -> tuple[Request | None, int]:
    """The request in `first` whose prompt would give `request` at least `min_reuse` more tokens, and how many."""
    least = request.reuse + min_reuse
    best, longest = None, 0
    for other in first if least < len(request.token_ids) else ():
        if other.token_ids[:least] == request.token_ids[:least]:
            shared = min(common_prefix(other.token_ids, request.token_ids), len(request.token_ids) - 1)
            if shared > longest:
                best, longest = other, shared
    return best, longest


def group_inputs(
    requests: Sequence[Request], device: torch.device, config
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, DynamicCache, list[int]]:
    """A prefill group's rows [left pad][reused prefix][fed tokens]: (ids, mask, positions, a cache holding the
    reused prefixes, tokens reused per row)."""
    fed = max(len(r.token_ids) - r.reuse for r in requests)  # a row that reuses more re-feeds, not pads
    reused = [max(0, len(r.token_ids) - fed) for r in requests]
    width = max(reused)
    ids = torch.zeros((len(requests), fed), dtype=torch.long)
    mask = torch.zeros((len(requests), width + fed), dtype=torch.long)
    for row, (request, n) in enumerate(zip(requests, reused, strict=True)):
        ids[row, fed - len(request.token_ids) + n :] = torch.tensor(request.token_ids[n:])
        mask[row, width - n : width] = 1
        mask[row, width + fed - len(request.token_ids) + n :] = 1
    ids, mask = ids.to(device), mask.to(device)
    pos = (mask.cumsum(dim=1) - 1).clamp(min=0)[:, width:]
    cache = DynamicCache(config=config)
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
    return ids, mask, pos, cache, reused


def prompt_kv(cache: DynamicCache, row: int, end: int, length: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """A prefilled row's last `length` tokens of KV, up to column `end`, per layer (views, not copies)."""
    start = end - length
    return [
        (layer.keys[row : row + 1, :, start:end], layer.values[row : row + 1, :, start:end]) for layer in cache.layers
    ]


def packed_inputs(
    next_tokens: torch.Tensor, slots: SlotKV, joining: Sequence[Request], device: torch.device
) -> tuple[packed.Plan, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The rows' next tokens then the joining prompts' new tokens as one sequence: (plan, ids, positions, the
    positions whose logits to keep)."""
    ids, pos, prompts = [next_tokens], [slots.lengths], []
    start = slots.rows
    for request in joining:
        fed = request.token_ids[request.reuse :]
        reused = request.prefix.kv if request.reuse else None
        prompts.append(packed.Prompt(start, start + len(fed), reused, request.reuse))
        ids.append(torch.tensor(fed, device=device))
        pos.append(torch.arange(request.reuse, len(request.token_ids), device=device))
        start += len(fed)
    plan = packed.Plan(slots, prompts)
    keep = torch.tensor([*range(slots.rows), *(p.end - 1 for p in prompts)], device=device)
    return plan, torch.cat(ids)[None], torch.cat(pos)[None], keep
