"""Inference engines and model resolution.

base.py    the Engine contract: Sampling in, Completion (token ids, logprobs, policy version) out
hf.py      in-process transformers with continuous batching and KV-budget admission
slots.py   the running batch's KV, a preallocated slot per row
packed.py  a joining prompt's prefill in the same forward pass as the rows' decode
sampling.py  the next token from logits (temperature, top-p), one generator per row
openai.py  any OpenAI-compatible completions server (vLLM, SGLang, `ptrain serve`)
openai_wire.py  the completions dialect: neutral request fields, responses read into Completions
logprobs_check.py  the start-up check that a server's logprobs are those of the distribution sampled
local_server.py  the hf engine in a child process (a private `ptrain serve`), out of the caller's GIL
serve.py   `ptrain serve`: an engine as an OpenAI-compatible HTTP server
chat_api.py  OpenAI chat messages to and from the chat format, for serve.py
models.py  model names to checkpoint directories (the packaged default, converted once)
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
