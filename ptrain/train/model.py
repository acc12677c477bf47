"""The policy being trained: loading it (LoRA through peft by default), scoring tokens, exporting it.

`masked_logprobs` is where the trainer spends its time. It runs the transformer once over the
whole sequence, then applies the output layer only at the positions that predict a model token,
in chunks: tool output and the prompt (most of a multi-turn episode) never get a (T, vocab) row
of logits, which is most of the memory and much of the compute for a 49k-token vocabulary.

With `prefix_len` it also runs the tokens every row shares (a GRPO group's prompt: system prompt,
tool schemas, the task) once instead of once per row: the prefix goes through the transformer with
its key/value cache kept, the cache is repeated for each row (a differentiable copy, so gradients
from every row flow back into the one prefix computation), and only the rows' own suffixes run as a
batch on top of it. Logprobs and gradients equal those of the full rows (tests/test_train.py).

The output layer's logits are not kept for the backward pass: each chunk's logits are recomputed
there from its hidden states (activation checkpointing of the head), so a micro-batch holds at most
one chunk's (rows, vocab) float32 logits at a time, however many model tokens it scores. Without
that, 4,000 model tokens at a 152k vocabulary keep about 2.5 GB alive until the backward pass.

The weights are loaded in float32 whatever the compute dtype: they are the optimizer's master
copy (ptrain/train/sharding.py says how bfloat16 compute is layered on top).
"""

from __future__ import annotations

import contextlib
import inspect
import json
from pathlib import Path

import torch
import torch.utils.checkpoint

from ptrain.engine.models import resolve_model
from ptrain.engine.sampling import processed_logprobs
from ptrain.errors import ConfigError

HEAD_CHUNK_ROWS = 1024  # positions per output-layer chunk


def load_policy(cfg, device: torch.device | str):
    """(model, tokenizer) for a TrainConfig: the base checkpoint, then LoRA (or all weights) trainable.

    With `cfg.init` the adapter of that checkpoint (or of a run's latest checkpoint) is loaded and
    trained further (an SFT warm start).
    """
    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = resolve_model(cfg.model)
    tokenizer = AutoTokenizer.from_pretrained(path)
    frozen_base = cfg.lora or bool(cfg.init)
    # what the optimizer updates is float32 (the master weights); LoRA's frozen base is kept in the
    # compute dtype (half the memory under bfloat16), its adapters float32 (peft's autocast_adapter_dtype)
    dtype = getattr(torch, cfg.compute_dtype(torch.device(device).type == "cpu")) if frozen_base else torch.float32
    model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype).to(device)
    model.config.use_cache = False
    if cfg.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if cfg.init:
        from ptrain.train.checkpoint import checkpoint_of

        adapter = checkpoint_of(Path(cfg.init)) / "adapter"  # a checkpoint, or a run's latest one
        if not (adapter / "adapter_config.json").is_file():
            raise ConfigError(f"--init {cfg.init}: no LoRA adapter in it", fix="point at a checkpoint directory")
        return PeftModel.from_pretrained(model, adapter, is_trainable=True), tokenizer
    if not cfg.lora:
        return model, tokenizer
    targets = cfg.lora_targets if cfg.lora_targets == "all-linear" else cfg.lora_targets.split(",")
    lora = LoraConfig(r=cfg.lora_rank, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                      target_modules=targets, task_type="CAUSAL_LM")  # fmt: skip
    return get_peft_model(model, lora), tokenizer


class Scorer(torch.nn.Module):
    """The policy as one module whose forward is `masked_logprobs`: the root that FSDP2 shards around
    (its hooks must see the forward that uses the embedding and the output layer)."""

    def __init__(self, policy):
        super().__init__()
        self.policy = policy

    def forward(self, *args, **kwargs):
        return masked_logprobs(self.policy, *args, **kwargs)


def parts(model) -> tuple[torch.nn.Module, torch.nn.Module]:
    """(the transformer without its output layer, the output layer), through any peft wrapper."""
    inner = model.get_base_model() if hasattr(model, "get_base_model") else model
    return inner.get_decoder(), inner.get_output_embeddings()


def masked_logprobs(
    model,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    mask: torch.Tensor,
    prefix_len: int = 0,
    temperature: torch.Tensor | None = None,
    top_p: torch.Tensor | None = None,
    with_entropy: bool = False,
):
    """log p(token_t | tokens_<t) where mask[b, t] is 1, zeros elsewhere; shape (B, T), float32.

    The distribution is the one each row was sampled from: the logits over `temperature[b]` and,
    under `top_p[b]` < 1, renormalised over the nucleus (`processed_logprobs`, the engine's own
    function). Without them, plain log_softmax. `with_entropy` also returns the entropy of that
    distribution at each masked position (detached), as a second (B, T) tensor.

    `prefix_len` > 0: the first prefix_len tokens are the same in every row and no mask position is
    at or before prefix_len; they are computed once (see the module docstring)."""
    decoder, head = parts(model)
    if prefix_len > 0:
        hidden = _suffix_hidden(decoder, input_ids, attention_mask, prefix_len)
    else:
        hidden = decoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    target = mask.clone()
    target[:, : prefix_len + 1] = 0  # the first token has nothing before it; the prefix predicts no target
    rows, cols = target.nonzero(as_tuple=True)
    ones = torch.ones(input_ids.shape[0], device=input_ids.device)
    temperature = ones if temperature is None else temperature
    plain = top_p is None and temperature is ones
    recompute = torch.is_grad_enabled() and hidden.requires_grad
    picked, entropies = [], []
    for start in range(0, len(rows), HEAD_CHUNK_ROWS):
        r, c = rows[start : start + HEAD_CHUNK_ROWS], cols[start : start + HEAD_CHUNK_ROWS]
        args = (hidden[r, c - 1 - prefix_len], input_ids[r, c], temperature[r], None if top_p is None else top_p[r])
        if recompute:  # the chunk's logits are recomputed in the backward pass, not kept
            lp, entropy = torch.utils.checkpoint.checkpoint(_head_chunk, head, *args, plain, with_entropy,
                                                            use_reentrant=False)  # fmt: skip
        else:
            lp, entropy = _head_chunk(head, *args, plain, with_entropy)
        picked.append(lp)
        entropies.append(entropy)
    out = torch.zeros(input_ids.shape, dtype=torch.float32, device=input_ids.device)
    if picked:
        out = out.index_put((rows, cols), torch.cat(picked))
    if not with_entropy:
        return out
    entropy = torch.zeros(input_ids.shape, dtype=torch.float32, device=input_ids.device)
    if entropies:
        entropy = entropy.index_put((rows, cols), torch.cat(entropies))
    return out, entropy


def _head_chunk(head, hidden: torch.Tensor, tokens: torch.Tensor, temperature: torch.Tensor,
                top_p: torch.Tensor | None, plain: bool, with_entropy: bool) -> tuple[torch.Tensor, torch.Tensor | None]:  # fmt: skip
    """One chunk of positions: the logprob of each one's token, and (detached) the entropy of its distribution."""
    logits = head(hidden)
    if plain:  # the common case, without a (rows, vocab) log_softmax copy
        logits = logits.float()
        lp = logits.gather(-1, tokens.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, -1)
        logprobs = logits.detach().log_softmax(-1) if with_entropy else None
    else:
        logprobs = processed_logprobs(logits, temperature, top_p, keep=tokens)
        lp = logprobs.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
    if not with_entropy:
        return lp, None
    with torch.no_grad():
        p = logprobs.detach().exp()
        return lp, -(p * logprobs.detach().nan_to_num(neginf=0.0)).sum(-1)


def _suffix_hidden(decoder, input_ids: torch.Tensor, attention_mask: torch.Tensor, prefix_len: int) -> torch.Tensor:
    """Hidden states of the positions after the shared prefix, (B, T - prefix_len, H)."""
    from transformers import DynamicCache

    rows = input_ids.shape[0]
    cache = DynamicCache()
    arg = "cache" if "cache" in inspect.signature(decoder.forward).parameters else "past_key_values"  # by version
    decoder(input_ids=input_ids[:1, :prefix_len], use_cache=True, **{arg: cache})
    cache.batch_repeat_interleave(rows)  # repeat_interleave: differentiable, one gradient into the prefix
    suffix = input_ids[:, prefix_len:]
    positions = torch.arange(prefix_len, input_ids.shape[1], device=input_ids.device).expand(rows, -1)
    out = decoder(input_ids=suffix, attention_mask=attention_mask, position_ids=positions, use_cache=True,
                  **{arg: cache})  # fmt: skip
    return out.last_hidden_state


def trainable_parameters(model) -> list[torch.nn.Parameter]:
    return [p for p in model.parameters() if p.requires_grad]


def save_weights(model, directory: Path) -> None:
    """The adapter (LoRA) or the whole model (full fine-tuning), in safetensors."""
    model.save_pretrained(directory, safe_serialization=True)


def load_weights(model, directory: Path) -> None:
    """Load weights saved by `save_weights` into the same architecture, in place."""
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    if hasattr(model, "peft_config"):
        set_peft_model_state_dict(model, load_file(directory / "adapter_model.safetensors"))
        return
    state = {}
    for shard in sorted(directory.glob("*.safetensors")):
        state.update(load_file(shard))
    model.load_state_dict(state, strict=False)


def export_merged(checkpoint: Path, out: Path, model_name: str | None = None) -> Path:
    """A plain transformers checkpoint (LoRA merged into the weights) that transformers or vLLM loads.

    A full fine-tuning checkpoint of strategy fsdp holds only shards: they are assembled here, in
    this one process, into the base model's architecture."""
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from ptrain.train.sharding import SHARDED_DIR, gathered_weights

    state = json.loads((checkpoint / "state.json").read_text())
    base = resolve_model(model_name or state["config"]["model"])
    if (checkpoint / "adapter" / "adapter_config.json").is_file():
        model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
        model = PeftModel.from_pretrained(model, checkpoint / "adapter").merge_and_unload()
    elif (checkpoint / SHARDED_DIR).is_dir():
        model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
        missing = set(gathered := gathered_weights(checkpoint / SHARDED_DIR)) - set(model.state_dict())
        if missing:
            raise ConfigError(f"{checkpoint}: {len(missing)} sharded weights are not in {base}, e.g. {min(missing)}",
                              fix="the checkpoint's config.model must name the model the run trained")  # fmt: skip
        model.load_state_dict(gathered, strict=False)
    else:
        model = AutoModelForCausalLM.from_pretrained(checkpoint / "model", dtype=torch.float32)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    AutoTokenizer.from_pretrained(base).save_pretrained(out)
    return out


def rows_of(batch: list, values: dict[int, torch.Tensor], like: torch.Tensor) -> torch.Tensor:
    """Per-sequence tensors (kept by `id`) laid out as the micro-batch's rows, (B, T) like `like`, 0 padded."""
    out = torch.zeros_like(like)
    for i, s in enumerate(batch):
        out[i, : len(s.token_ids)] = values[id(s)]
    return out


@contextlib.contextmanager
def swapped(params: list[torch.nn.Parameter], values: list[torch.Tensor]):
    """The parameters hold `values` inside the block and their own values again after it (no gradient)."""
    saved = [p.detach().clone() for p in params]
    with torch.no_grad():
        for p, v in zip(params, values, strict=True):
            p.copy_(v)
    try:
        yield
    finally:
        with torch.no_grad():
            for p, v in zip(params, saved, strict=True):
                p.copy_(v)
