"""Inference engines and model resolution: token ids in, token ids and logprobs out.

base.py         the Engine contract: Sampling in, Completion (token ids, logprobs, policy version) out
hf.py           in-process transformers with continuous batching: the engine's public face and worker loop
hf_batch.py     the running batch: its rows, their KV slots, the forward passes of one step
hf_request.py   one generate call in flight, and its Completion
admission.py    the KV budget and which waiting prompts join the batch
prefill.py      a joining prompt's inputs: its prefix-cache hit, its group's padded ids
prefix_cache.py prompts' KV kept for the next turn of the same episode
slots.py        the running batch's KV, a preallocated slot per row
packed.py       a joining prompt's prefill in the same forward pass as the rows' decode
sampling.py     the next token from logits (temperature, top-p), one generator per row
weights.py      the trainer's weights as a payload an engine applies (LoRA merged or unmerged, or all)
openai.py       any OpenAI-compatible completions server (vLLM, SGLang, `ptrain serve`)
openai_wire.py  the completions dialect: neutral request fields, responses read into Completions
logprobs_check.py  the start-up check that a server's logprobs are those of the distribution sampled
local_server.py the hf engine in a child process (a private `ptrain serve`), out of the caller's GIL
scripted.py     replies written by a function (`--engine gold`, tests)
models.py       model names to checkpoint directories (the packaged default, converted once)

The HTTP server over an engine is ptrain/serve/; the engine itself knows no taskpack or chat format.
"""

from __future__ import annotations

from typing import Any

from ptrain.engine.base import Engine
from ptrain.errors import ConfigError


def open_engine(kind: str, model: str, base_url: str = "", **options: Any) -> tuple[Engine, Any]:
    """An engine and its model's tokenizer: `hf` loads `model` in process, `hf-process` in a child
    process of its own, `openai` talks to `base_url`.

    The tokenizer always comes from `model` (a packaged name or a checkpoint directory), so the
    episode's token ids are the served model's own. Options with a value of 0 or None are left out.
    """
    from transformers import AutoTokenizer

    from ptrain.engine.models import resolve_model

    path = resolve_model(model)
    tokenizer = AutoTokenizer.from_pretrained(path)
    options = {k: v for k, v in options.items() if v}
    if kind == "hf":
        from ptrain.engine.hf import HFEngine

        engine = HFEngine.load(path, **options)
        engine.model = model  # the name the user gave, for the episode rows
        return engine, tokenizer
    if kind == "hf-process":
        from ptrain.engine.local_server import LocalServerEngine

        return LocalServerEngine.start(model, options, tokenizer), tokenizer
    if kind == "openai":
        from ptrain.engine.openai import OpenAIEngine

        return OpenAIEngine(base_url, tokenizer=tokenizer, **options), tokenizer
    raise ConfigError(f"unknown engine {kind!r}", fix="use --engine hf or --engine openai")
