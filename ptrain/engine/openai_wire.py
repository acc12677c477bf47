"""The completions dialect on the wire: the fields sent to neutralise server defaults, and the answers read.

The `openai` engine asks for token ids and logprobs (see openai.py for the request); this module
turns what a server answers into a `Completion`, or an `EngineError` that says what was wrong with
it. Token ids come from `choices[0].token_ids` (newer vLLM, ptrain serve) or from older vLLM's
`token_id:N` logprob tokens; a server that gives neither is read in text mode (`text_completion`
tokenizes the text itself, logprobs NaN). Error bodies are read for the server's own message.

It is apart from the engine because it is pure: bodies in, completions out, no HTTP, so it is
tested on recorded vLLM responses (tests/fixtures/vllm_answers/) and shared with the logprobs check.

    done = completion_from_response(body, prompt_tokens=7, policy_version=0, url=url)
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from ptrain.engine.base import FINISH_REASONS, Completion
from ptrain.errors import EngineError

TOKEN_ID_PREFIX = "token_id:"  # vLLM's return_tokens_as_token_ids placeholder
# sent with every request: left out, vLLM takes them from the model's generation_config.json (its default
# --generation-config auto), and a top_k or penalty there would change the distribution sampled
NEUTRAL = {"top_k": -1, "min_p": 0.0, "repetition_penalty": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0}


def completion_from_response(body: dict[str, Any], prompt_tokens: int, policy_version: int, url: str) -> Completion:
    """The first choice of a completions response as a Completion (its timings left at 0).

    Token ids come from `choices[0].token_ids`, else from vLLM's `token_id:N` logprob tokens; the
    policy version from `ptrain_policy_version` (the choice's, then the response's), else the one given."""
    try:
        choice = body["choices"][0]
        logprobs = choice.get("logprobs") or {}
        token_ids = choice.get("token_ids")
        if token_ids is None:
            token_ids = _ids_from_tokens(logprobs.get("tokens"))
        if token_ids is None:
            raise EngineError(
                f"{url} gave back text but no token ids (neither choices[0].token_ids nor "
                "'token_id:N' logprob tokens), and training needs the exact tokens sampled",
                fix="use a server that honours return_token_ids or return_tokens_as_token_ids "
                "(vLLM, or `ptrain serve`), or give the engine the model's tokenizer for text mode",
            )
        ids = tuple(_int(t) for t in token_ids)
        values = logprobs.get("token_logprobs")
        if not isinstance(values, list) or len(values) != len(ids) or any(v is None for v in values):
            raise EngineError(
                f"{url} gave {len(ids)} tokens but logprobs.token_logprobs {clip(json.dumps(values))}; "
                "training needs one logprob per token",
                fix="use a server that returns completion logprobs (vLLM, or `ptrain serve`)",
            )
        lps = tuple(float(v) for v in values)
        finish = choice.get("finish_reason")
        version = choice.get("ptrain_policy_version", body.get("ptrain_policy_version", policy_version))
        prompt = (body.get("usage") or {}).get("prompt_tokens", prompt_tokens)
        completion = Completion(ids, lps, finish, int(version), int(prompt))
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        raise EngineError(f"{url} answered with an unexpected completion: {clip(json.dumps(body))}") from e
    if finish not in FINISH_REASONS:
        raise EngineError(f"{url} finished a completion with {finish!r}, expected one of {FINISH_REASONS}")
    return completion


def has_token_ids(body: dict[str, Any]) -> bool:
    try:
        choice = body["choices"][0]
        tokens = (choice.get("logprobs") or {}).get("tokens")
        return choice.get("token_ids") is not None or _ids_from_tokens(tokens) is not None
    except (KeyError, IndexError, TypeError, AttributeError):
        return True  # malformed: let completion_from_response say what is wrong


def text_completion(
    body: dict[str, Any], tokenizer: Any, stop_token_ids: Sequence[int], prompt_tokens: int, policy_version: int,
    url: str,
) -> Completion:  # fmt: skip
    """A text-only completion, tokenized here; a stop ends with the stop token, as token-mode ones do."""
    try:
        choice = body["choices"][0]
        text, finish = choice["text"], choice.get("finish_reason")
        if not isinstance(text, str):
            raise TypeError("text is not a string")
    except (KeyError, IndexError, TypeError) as e:
        raise EngineError(f"{url} answered with an unexpected completion: {clip(json.dumps(body))}") from e
    finish = "stop" if finish in ("stop", "eos") else "length" if finish == "length" else finish
    if finish not in FINISH_REASONS:
        raise EngineError(f"{url} finished a completion with {finish!r}, expected one of {FINISH_REASONS}")
    ids = list(tokenizer.encode(text, add_special_tokens=False))
    if finish == "stop" and stop_token_ids and (not ids or ids[-1] not in stop_token_ids):
        ids.append(stop_token_ids[0])
    return Completion(tuple(ids), (math.nan,) * len(ids), finish, policy_version, prompt_tokens, text_mode=True)


def _ids_from_tokens(tokens: Any) -> list[int] | None:
    """Token ids from vLLM's `token_id:N` logprob tokens, or None if they are not in that form."""
    if not isinstance(tokens, list) or not all(isinstance(t, str) and t.startswith(TOKEN_ID_PREFIX) for t in tokens):
        return None
    try:
        return [int(t[len(TOKEN_ID_PREFIX) :]) for t in tokens]
    except ValueError:
        return None


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"token id {value!r} is not an integer")
    return value


def error_message(text: str) -> str:
    """The server's own message from an OpenAI-style error body, else the body itself."""
    try:
        body = json.loads(text)
    except ValueError:
        return clip(text.strip()) or "(empty body)"
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    if isinstance(error, str):
        return error
    if isinstance(body, dict) and body.get("message"):
        return str(body["message"])
    return clip(text.strip())


def clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
