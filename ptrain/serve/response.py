"""What `ptrain serve` answers: OpenAI response bodies and their logprobs (ptrain/serve/server.py).

Apart from the server because it is pure: completions in, JSON-ready dicts out. Logprobs are the
sampled token's only, clamped to `MIN_LOGPROB` (JSON has no -inf), in the completions layout
(`text_offset`, `token_logprobs`, `tokens`, `top_logprobs`) or the chat one (`content`).
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ptrain.engine.base import Completion

if TYPE_CHECKING:
    from ptrain.serve.server import Served

MIN_LOGPROB = -9999.0  # JSON has no -inf; vLLM clamps the same way


def response_body(
    prefix: str, kind: str, served: Served, done: list[Completion], prompt_tokens: int, choices: list[dict[str, Any]]
) -> dict[str, Any]:
    """A completions or chat response around its `choices`: id, usage, and the oldest policy version that sampled one."""
    generated = sum(len(c.token_ids) for c in done)
    return {
        "id": f"{prefix}-{uuid.uuid4().hex}",
        "object": kind,
        "created": int(time.time()),
        "model": served.name,
        "choices": choices,
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": generated,
            "total_tokens": prompt_tokens + generated,
        },
        "ptrain_policy_version": min(c.policy_version for c in done),
    }


def completion_logprobs(tokenizer: Any, c: Completion, as_ids: bool) -> dict[str, Any]:
    pieces = _pieces(tokenizer, c.token_ids)
    tokens = [f"token_id:{t}" for t in c.token_ids] if as_ids else pieces
    values = [max(lp, MIN_LOGPROB) for lp in c.logprobs]
    offsets = list(itertools.accumulate((len(p) for p in pieces[:-1]), initial=0)) if pieces else []
    return {
        "text_offset": offsets,
        "token_logprobs": values,
        "tokens": tokens,
        "top_logprobs": [{token: value} for token, value in zip(tokens, values, strict=True)],
    }


def chat_logprobs(tokenizer: Any, c: Completion) -> dict[str, Any]:
    entries = []
    for piece, lp in zip(_pieces(tokenizer, c.token_ids), c.logprobs, strict=True):
        value = max(lp, MIN_LOGPROB)
        entries.append({"token": piece, "logprob": value, "bytes": list(piece.encode()), "top_logprobs": []})
    return {"content": entries}


def _pieces(tokenizer: Any, ids: Sequence[int]) -> list[str]:
    return tokenizer.batch_decode([[i] for i in ids], skip_special_tokens=False, clean_up_tokenization_spaces=False)


def decode_text(tokenizer: Any, ids: Sequence[int], skip_special: bool) -> str:
    return tokenizer.decode(list(ids), skip_special_tokens=skip_special, clean_up_tokenization_spaces=False)
