"""What a request to `ptrain serve` asks for: its body checked, its prompt and fields read (ptrain/serve/server.py).

Apart from the server because it is the part that says no: every field is checked for its type and
range, and a feature the server cannot honour is refused with a `BadRequest` that names it, never
ignored (`UNSUPPORTED`: streaming, penalties, beam search, ...). The server answers a `BadRequest`
with an OpenAI-style error body.

    body = await read_body(request, served)
    max_tokens = int_field(body, "max_tokens", 16, 1)
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ptrain.serve.chat_api import BadRequest

if TYPE_CHECKING:
    from ptrain.serve.server import Served

UNSUPPORTED = {  # request fields this server cannot honour, and the values that mean "not used"
    "stream": (None, False),
    "echo": (None, False),
    "suffix": (None, ""),
    "best_of": (None, 1),
    "use_beam_search": (None, False),
    "logit_bias": (None, {}),
    "presence_penalty": (None, 0),
    "frequency_penalty": (None, 0),
    "repetition_penalty": (None, 1),
    "top_k": (None, 0, -1),
    "min_p": (None, 0),
    "min_tokens": (None, 0),
    "prompt_logprobs": (None,),
    "response_format": (None, {"type": "text"}),
}


async def read_body(request: web.Request, served: Served) -> dict[str, Any]:
    """The body as a JSON object naming a model this server serves (or none) and no field it cannot honour."""
    try:
        body = json.loads(await request.read())
    except (ValueError, UnicodeDecodeError) as e:
        raise BadRequest(f"the request body is not valid JSON: {e}") from e
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    model = body.get("model")
    if model is not None and model not in (served.name, served.engine.model, *served.adapters):
        raise BadRequest(
            f"the model {model!r} does not exist; this server serves {served.name!r}", 404, "NotFoundError"
        )
    for name, unused in UNSUPPORTED.items():
        if body.get(name) not in unused:
            raise BadRequest(f"{name}={json.dumps(body[name])} is not supported by this server; leave it out")
    return body


def prompt_token_ids(served: Served, prompt: Any, add_special_tokens: bool) -> list[int]:
    """A completions `prompt` (text, token ids, or a batch of one of either) as token ids."""
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str | list):
        prompt = prompt[0]  # a batch of one
    if isinstance(prompt, str) and prompt:
        return list(served.tokenizer(prompt, add_special_tokens=add_special_tokens).input_ids)
    vocab = len(served.tokenizer)
    if isinstance(prompt, list) and prompt and all(type(t) is int and 0 <= t < vocab for t in prompt):
        return prompt
    raise BadRequest(
        f"`prompt` must be a non-empty string or a non-empty list of token ids in [0, {vocab}), one prompt per "
        "request (use n for several samples of it)"
    )


def int_field(
    body: dict[str, Any], name: str, default: int | None, lo: int | None = None, hi: int | None = None, why: str = ""
) -> int | None:
    value = body.get(name)
    if value is None:
        return default
    if type(value) is not int or (lo is not None and value < lo) or (hi is not None and value > hi):
        bounds = f" from {lo}" if lo is not None else ""
        bounds += f" to {hi}" if hi is not None else ""
        raise BadRequest(f"`{name}` must be an integer{bounds}, got {json.dumps(value)}" + (f" ({why})" if why else ""))
    return value


def number_field(body: dict[str, Any], name: str, default: float) -> float:
    value = body.get(name)
    if value is None:
        return default
    if type(value) not in (int, float) or not math.isfinite(value):
        raise BadRequest(f"`{name}` must be a number, got {json.dumps(value)}")
    return float(value)


def bool_field(body: dict[str, Any], name: str, default: bool) -> bool:
    value = body.get(name)
    if value is None:
        return default
    if type(value) is not bool:
        raise BadRequest(f"`{name}` must be true or false, got {json.dumps(value)}")
    return value


def stop_ids(served: Served, body: dict[str, Any]) -> set[int]:
    """stop_token_ids, stop strings that are single tokens, and EOS unless ignore_eos (as vLLM does)."""
    stop = set(_ints(body, "stop_token_ids"))
    strings = body.get("stop") or []
    strings = [strings] if isinstance(strings, str) else strings
    if not isinstance(strings, list) or not all(isinstance(text, str) for text in strings):
        raise BadRequest(f"`stop` must be a string or a list of strings, got {json.dumps(strings)}")
    for text in strings:
        ids = served.tokenizer(text, add_special_tokens=False).input_ids
        if len(ids) != 1:
            raise BadRequest(
                f"stop string {text!r} is {len(ids)} tokens; this server stops only on single tokens",
                kind="NotImplementedError",
            )
        stop.add(ids[0])
    if not bool_field(body, "ignore_eos", False) and served.tokenizer.eos_token_id is not None:
        stop.add(served.tokenizer.eos_token_id)
    return stop


def _ints(body: dict[str, Any], name: str) -> list[int]:
    value = body.get(name) or []
    if not isinstance(value, list) or not all(type(t) is int and t >= 0 for t in value):
        raise BadRequest(f"`{name}` must be a list of token ids, got {json.dumps(value)}")
    return value
