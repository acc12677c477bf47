"""One forward pass for the running rows' next tokens and the prompts joining the batch.

Without it, a prompt that arrives while rows are decoding gets a forward pass of its own (its
prefill), and then the rows get theirs. For a small model on a CPU core a pass costs nearly the same
whatever it feeds, because it reads every weight once (SmolLM2-135M in bfloat16: 270 MB, most of a
decode step's 80-150 ms); in async rollout an episode's next turn arrives every few steps, so those
extra passes add up. The hf engine feeds both in one pass instead, as one sequence of T tokens:

    [row 0's next token] ... [row n-1's next token] [prompt A's new tokens] [prompt B's] ...

each at its own position (a row's at its length, a prompt's after the tokens it reuses from the
prefix cache). Linear layers do not care which sequence a token belongs to; attention does, so it
runs part by part in `packed_attention`:

  * the rows' tokens attend to their slots (`ptrain.engine.slots`), exactly as in a decode step;
  * each prompt's tokens attend causally to its reused prefix and to themselves.

`packed_attention` is registered with transformers' `AttentionInterface` as `ptrain_packed`. The
engine switches the model's attention implementation to it for the packed pass only (`packed_pass`),
and it hands every call that carries no plan to sdpa with sdpa's masks, so anything else running the
shared model meanwhile (a trainer) computes exactly what it would with sdpa.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator

import torch
from transformers.cache_utils import Cache
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask
from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

from ptrain.engine.slots import SlotKV, ViewLayer

PACKED = "ptrain_packed"
BASE = "sdpa"  # what packed_attention stands in for; the engine packs only models that use it


@dataclasses.dataclass(eq=False)
class Prompt:
    """A joining prompt's place in the packed sequence, and its KV per layer once the pass has run."""

    start: int
    end: int
    reused: list[tuple[torch.Tensor, torch.Tensor]] | None  # a prefix entry's KV, [1, kv heads, >= reuse, dim]
    reuse: int
    # filled by the pass, per layer: [1, kv heads, reuse + new, dim]
    kv: list[tuple[torch.Tensor, torch.Tensor]] = dataclasses.field(default_factory=list)

    def mask(self, device: torch.device) -> torch.Tensor:
        """Causal over the reused prefix and the new tokens: [1, 1, new, reuse + new] booleans."""
        new = self.end - self.start
        seen = self.reuse + torch.arange(new, device=device)
        return (torch.arange(self.reuse + new, device=device)[None, :] <= seen[:, None])[None, None]


class Plan:
    """Which tokens of the packed sequence are whose: the first `rows` are the running rows', then the prompts'."""

    def __init__(self, slots: SlotKV, prompts: list[Prompt]):
        self.slots, self.rows, self.prompts = slots, slots.rows, prompts
        self.row_mask = (slots.mask() > 0)[:, None, None, :]  # [rows, 1, 1, width]
        self.prompt_masks = [prompt.mask(slots.device) for prompt in prompts]  # once, not once a layer


class PackedLayer(ViewLayer):
    """One layer's cache for the packed pass: the rows' new keys and values go into their slots, each
    prompt's are kept (after its reused prefix) for its attention and, afterwards, its slot."""

    def __init__(self, plan: Plan, index: int):
        super().__init__(index)
        self.plan = plan

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        plan, n = self.plan, self.plan.rows
        if n:
            plan.slots.write(self.index, key_states[0, :, :n].transpose(0, 1), value_states[0, :, :n].transpose(0, 1))
        for prompt in plan.prompts:
            keys, values = key_states[:, :, prompt.start : prompt.end], value_states[:, :, prompt.start : prompt.end]
            if prompt.reuse:
                old_keys, old_values = prompt.reused[self.index]
                keys = torch.cat([old_keys[:, :, : prompt.reuse], keys], dim=2)
                values = torch.cat([old_values[:, :, : prompt.reuse], values], dim=2)
            prompt.kv.append((keys, values))
        return key_states, value_states

    def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
        return query_length, 0

    def get_seq_length(self) -> int:
        return 0


def packed_attention(module, query, key, value, attention_mask, dropout=0.0, scaling=None, ptrain_plan=None, **kwargs):
    """Attention for a packed pass (see the module docstring); without a plan, sdpa's."""
    if ptrain_plan is None:
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout, scaling, **kwargs)
    plan, layer = ptrain_plan, module.layer_idx
    out = query.new_empty((query.shape[2], query.shape[1], query.shape[3]))  # [tokens, heads, dim]
    if plan.rows:
        slots, n = plan.slots, plan.rows
        keys, values = slots.keys[layer][:n, :, : slots.width], slots.values[layer][:n, :, : slots.width]
        rows = query[0, :, :n].transpose(0, 1)[:, :, None]  # [rows, heads, 1, dim]
        out[:n] = sdpa_attention_forward(module, rows, keys, values, plan.row_mask, scaling=scaling)[0][:, 0]
    for prompt, mask in zip(plan.prompts, plan.prompt_masks, strict=True):
        keys, values = prompt.kv[layer]
        tokens = query[:, :, prompt.start : prompt.end]
        attended, _ = sdpa_attention_forward(module, tokens, keys, values, mask, scaling=scaling)
        out[prompt.start : prompt.end] = attended[0]
    return out[None], None


ALL_ATTENTION_FUNCTIONS.register(PACKED, packed_attention)
ALL_MASK_ATTENTION_FUNCTIONS.register(PACKED, sdpa_mask)


@contextlib.contextmanager
def packed_pass(config) -> Iterator[None]:
    """The model's attention is `packed_attention` for the duration (it is sdpa for calls without a plan)."""
    before = config._attn_implementation
    config._attn_implementation = PACKED
    try:
        yield
    finally:
        config._attn_implementation = before


def packed_cache(plan: Plan, layers: int) -> Cache:
    return Cache(layers=[PackedLayer(plan, index) for index in range(layers)])
