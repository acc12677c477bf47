"""Any engine behind an OpenAI-compatible HTTP API, as vLLM serves one (`ptrain serve`).

The same endpoints and fields as vLLM's OpenAI server, so the `openai` engine, vLLM clients and
external agent harnesses can all use the policy being trained:

    GET  /health                 200 while serving
    GET  /v1/models              the served name, its max_model_len (the engine's context window) and
                                 logprobs_mode: processed_logprobs (what the engine contract returns)
    POST /v1/completions         prompt as text or token ids; n samples generated concurrently; vLLM's
                                 stop_token_ids, ignore_eos, return_token_ids, return_tokens_as_token_ids
    POST /v1/chat/completions    messages (system/user/assistant/tool) and OpenAI `tools`, rendered in
                                 ptrain's ChatML tool format; `<tool_call>` blocks in the reply come
                                 back as OpenAI `tool_calls`
    GET  /metrics                the engine's stats as JSON
    POST /v1/load_lora_adapter   vLLM's run-time adapter endpoints (see load_lora_adapter)
    POST /v1/unload_lora_adapter

Every response carries `ptrain_policy_version`, the weights that sampled it. Logprobs are those of
the sampled token only (`logprobs` 0 or 1), under the distribution it was drawn from (vLLM's
processed_logprobs: logits / temperature, renormalised over the top-p nucleus), which the model card
reports so that the `openai` engine need not probe for it. Stop strings work when each is one token
(`<|im_end|>`).
Features that would change what is sampled and cannot be honoured (longer stop strings, streaming,
penalties, beam search) are refused with a 400 that says so, never ignored. A bad request gets an OpenAI-style `{"error": {"message", "type"}}` with status 400; an engine
failure gets 503; nothing a client sends stops the server. A client that hangs up cancels its generation.

This file is the app: routes, handlers, sampling and errors. A request's fields are read and checked in
serve_request.py, response bodies and logprobs written in serve_response.py.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from ptrain.engine.base import Completion, Engine, Sampling
from ptrain.errors import ConfigError, EngineError
from ptrain.rollout.chat import ChatFormat
from ptrain.serve.chat_api import BadRequest, assistant_message, chat_prompt_ids, tool_schemas
from ptrain.serve.request import bool_field, int_field, number_field, prompt_token_ids, read_body, stop_ids
from ptrain.serve.response import chat_logprobs, completion_logprobs, decode_text, response_body

log = logging.getLogger("ptrain.serve")

MAX_N = 64  # samples of one prompt per request
MAX_BODY_BYTES = 64 * 2**20


@dataclass(frozen=True, eq=False)
class Served:
    engine: Engine
    tokenizer: Any  # the model's Hugging Face tokenizer
    name: str  # what clients pass as `model`
    fmt: ChatFormat | None  # None when the model is not ChatML: /v1/chat/completions then says so
    fmt_error: str = ""
    text_only: bool = False  # answer like an API that gives back text only (no token ids): clients' text mode
    adapters: set[str] = field(default_factory=set)  # LoRA adapters loaded at run time: more names for the model
    adapter_base: dict = field(default_factory=dict)  # the weights adapters replace (ptrain/engine/weights.py)


SERVED = web.AppKey("served", Served)


def build_app(
    engine: Engine, tokenizer: Any, served_name: str | None = None, text_only: bool = False
) -> web.Application:
    try:
        fmt, fmt_error = ChatFormat(tokenizer), ""
    except ConfigError as e:
        fmt, fmt_error = None, str(e)
    app = web.Application(middlewares=[_errors], client_max_size=MAX_BODY_BYTES)
    app[SERVED] = Served(engine, tokenizer, served_name or engine.model, fmt, fmt_error, text_only)
    app.router.add_get("/health", health)
    app.router.add_get("/v1/models", models)
    app.router.add_post("/v1/completions", completions)
    app.router.add_post("/v1/chat/completions", chat_completions)
    app.router.add_get("/metrics", metrics)
    app.router.add_post("/v1/load_lora_adapter", load_lora_adapter)
    app.router.add_post("/v1/unload_lora_adapter", unload_lora_adapter)
    return app


async def serve(
    engine: Engine,
    tokenizer: Any,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    served_name: str | None = None,
    text_only: bool = False,
    stop: asyncio.Event | None = None,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve until `stop` is set (forever without one); `on_ready` gets the base URL once listening."""
    runner = web.AppRunner(
        build_app(engine, tokenizer, served_name, text_only),
        access_log=None,
        shutdown_timeout=5.0,
        handler_cancellation=True,
    )
    await runner.setup()
    try:
        try:
            await web.TCPSite(runner, host, port).start()
        except OSError as e:
            raise ConfigError(f"cannot listen on {host}:{port}: {e.strerror or e}", fix="choose another --port") from e
        bound = runner.addresses[0][1] if runner.addresses else port
        if on_ready is not None:
            on_ready(f"http://{f'[{host}]' if ':' in host else host}:{bound}/v1")
        await (stop or asyncio.Event()).wait()
    finally:
        await runner.cleanup()


# --- endpoints --------------------------------------------------------------------------------


async def health(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def models(request: web.Request) -> web.Response:
    served = request.app[SERVED]
    card = {
        "id": served.name,
        "object": "model",
        "created": int(time.time()),
        "owned_by": "ptrain",
        "root": served.engine.model,
        "max_model_len": served.engine.context_window,
        "logprobs_mode": "processed_logprobs",  # the Engine contract (ptrain/engine/base.py); vLLM has no such field
    }
    return web.json_response({"object": "list", "data": [card]})


async def load_lora_adapter(request: web.Request) -> web.Response:
    """vLLM's run-time adapter endpoint: {"lora_name", "lora_path"} (a peft adapter directory).

    The hf engine has no adapter slots: the adapter is applied to the served weights (merged in float32,
    unmerged in bfloat16: ptrain/engine/weights.py), replacing the previous one, between two decode
    steps, and `lora_name` becomes another name for the model.
    `ptrain_policy_version` in the body sets the version completions report (default: one more)."""
    served = request.app[SERVED]
    body = await read_body(request, served)
    name, path = body.get("lora_name"), body.get("lora_path")
    if not isinstance(name, str) or not name or not isinstance(path, str) or not path:
        raise BadRequest("load_lora_adapter needs lora_name and lora_path (a peft adapter directory)")
    if not hasattr(served.engine, "update_weights"):
        raise BadRequest(
            f"the {served.engine.name} engine cannot load adapters", status=501, kind="NotImplementedError"
        )
    from ptrain.engine.weights import adapter_payload, apply_payload

    try:
        payload = await asyncio.to_thread(adapter_payload, Path(path))
    except (OSError, ValueError, KeyError) as e:
        raise BadRequest(f"cannot read the adapter at {path}: {type(e).__name__}: {e}") from e
    version = int_field(body, "ptrain_policy_version", served.engine.policy_version + 1, 0)
    apply = lambda module: apply_payload(module, payload, served.adapter_base)  # noqa: E731
    await asyncio.to_thread(served.engine.update_weights, apply, version)
    served.adapters.add(name)
    return web.Response(text=f"Success: LoRA adapter '{name}' added successfully.")


async def unload_lora_adapter(request: web.Request) -> web.Response:
    """vLLM's {"lora_name"}: the name is no longer served (a 404 for later requests naming it).

    The served weights stay those of the last adapter loaded: the hf engine holds one set, and the
    `openai` engine unloads only adapters it has superseded. vLLM's answers, text and errors alike."""
    served = request.app[SERVED]
    name = (await read_body(request, served)).get("lora_name")
    if not isinstance(name, str) or not name:
        raise BadRequest("'lora_name' needs to be provided to unload a LoRA adapter.", kind="InvalidUserInput")
    if name not in served.adapters:
        raise BadRequest(f"The lora adapter '{name}' cannot be found.", status=404, kind="NotFoundError")
    served.adapters.discard(name)
    return web.Response(text=f"Success: LoRA adapter '{name}' removed successfully.")


async def metrics(request: web.Request) -> web.Response:
    engine = request.app[SERVED].engine
    return web.json_response({**asdict(engine.stats()), "policy_version": engine.policy_version})


async def completions(request: web.Request) -> web.Response:
    served = request.app[SERVED]
    body = await read_body(request, served)
    prompt_ids = prompt_token_ids(served, body.get("prompt"), bool_field(body, "add_special_tokens", True))
    stop = stop_ids(served, body)
    logprobs = int_field(body, "logprobs", None, 0, 1, why="only the sampled token's logprob is available")
    done = await _sample(served, prompt_ids, body, int_field(body, "max_tokens", 16, 1), stop)
    skip_special = bool_field(body, "skip_special_tokens", True)
    with_stop = bool_field(body, "include_stop_str_in_output", False)
    as_ids = bool_field(body, "return_tokens_as_token_ids", False)
    with_ids = bool_field(body, "return_token_ids", False)
    as_ids, with_ids = as_ids and not served.text_only, with_ids and not served.text_only
    choices = []
    for i, c in enumerate(done):
        stopped = c.finish_reason == "stop" and bool(c.token_ids) and c.token_ids[-1] in stop
        text_ids = c.token_ids[:-1] if stopped and not with_stop else c.token_ids
        choice = {
            "index": i,
            "text": decode_text(served.tokenizer, text_ids, skip_special),
            "logprobs": None if logprobs is None else completion_logprobs(served.tokenizer, c, as_ids),
            "finish_reason": c.finish_reason,
            "stop_reason": c.token_ids[-1] if stopped else None,
            "ptrain_policy_version": c.policy_version,
        }
        if with_ids:
            choice |= {"token_ids": list(c.token_ids), "prompt_token_ids": prompt_ids}
        choices.append(choice)
    return web.json_response(response_body("cmpl", "text_completion", served, done, len(prompt_ids), choices))


async def chat_completions(request: web.Request) -> web.Response:
    served = request.app[SERVED]
    body = await read_body(request, served)
    if served.fmt is None:
        raise BadRequest(f"this model cannot chat: {served.fmt_error}", status=501, kind="NotImplementedError")
    fmt = served.fmt
    tool_choice = body.get("tool_choice", "auto")
    if tool_choice not in ("auto", "none", None):
        raise BadRequest(f"tool_choice {tool_choice!r} is not supported (no guided decoding); use 'auto' or 'none'")
    int_field(body, "top_logprobs", None, 0, 0, why="only the sampled token's logprob is available")
    tools = tool_schemas(body.get("tools"))
    prompt_ids = chat_prompt_ids(fmt, body.get("messages"), tools)
    stop = {*fmt.stop_token_ids, *stop_ids(served, body)}
    max_tokens = int_field(body, "max_completion_tokens", None, 1)
    max_tokens = int_field(body, "max_tokens", None, 1) if max_tokens is None else max_tokens
    done = await _sample(served, prompt_ids, body, max_tokens, stop)
    logprobs, with_ids = bool_field(body, "logprobs", False), bool_field(body, "return_token_ids", False)
    choices = []
    for i, c in enumerate(done):
        ids = c.token_ids[:-1] if c.finish_reason == "stop" and c.token_ids and c.token_ids[-1] in stop else c.token_ids
        message = assistant_message(fmt.render_text(ids), parse_tools=bool(tools) and tool_choice != "none")
        choice = {
            "index": i,
            "message": message,
            "logprobs": chat_logprobs(served.tokenizer, c) if logprobs else None,
            "finish_reason": "tool_calls" if message["tool_calls"] else c.finish_reason,
            "ptrain_policy_version": c.policy_version,
        }
        if with_ids:
            choice["token_ids"] = list(c.token_ids)
        choices.append(choice)
    response = response_body("chatcmpl", "chat.completion", served, done, len(prompt_ids), choices)
    if with_ids:
        response["prompt_token_ids"] = prompt_ids
    return web.json_response(response)


# --- sampling ---------------------------------------------------------------------------------


async def _sample(
    served: Served, prompt_ids: list[int], body: dict[str, Any], max_tokens: int | None, stop: set[int]
) -> list[Completion]:
    """n samples of one prompt, generated concurrently (seeded `seed`, `seed + 1`, ... when seeded)."""
    window = served.engine.context_window
    room = window - len(prompt_ids)
    if room < 1:
        raise BadRequest(
            f"the prompt has {len(prompt_ids)} tokens, and this model's maximum context length is {window} "
            "tokens (prompt and completion together); shorten the prompt"
        )
    if max_tokens is not None and max_tokens > room:
        raise BadRequest(
            f"max_tokens is {max_tokens}, but the prompt has {len(prompt_ids)} tokens and this model's maximum "
            f"context length is {window}, which leaves {room}; lower max_tokens or shorten the prompt"
        )
    n = int_field(body, "n", 1, 1, MAX_N)
    seed = int_field(body, "seed", None)
    temperature = number_field(body, "temperature", 1.0)
    top_p = number_field(body, "top_p", 1.0)
    samplings = [
        Sampling(max_tokens or room, temperature, top_p, tuple(sorted(stop)), None if seed is None else seed + i)
        for i in range(n)
    ]
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(served.engine.generate(prompt_ids, s)) for s in samplings]
    except BaseExceptionGroup as group_error:
        raise group_error.exceptions[0] from None
    return [task.result() for task in tasks]


# --- errors -----------------------------------------------------------------------------------


def _error(status: int, message: str, kind: str) -> web.Response:
    return web.json_response(
        {"error": {"message": message, "type": kind, "param": None, "code": status}}, status=status
    )


@web.middleware
async def _errors(request: web.Request, handler: Callable) -> web.StreamResponse:
    """Every failure as an OpenAI-style error body; none of them stops the server."""
    try:
        return await handler(request)
    except BadRequest as e:
        return _error(e.status, str(e), e.kind)
    except ConfigError as e:  # Sampling's own checks (temperature, top_p)
        return _error(400, str(e), "BadRequestError")
    except EngineError as e:
        log.warning("engine failure on %s: %s", request.path, e)
        return _error(503, f"the engine failed: {e}", "EngineError")
    except web.HTTPException as e:
        if e.status < 400:
            raise
        return _error(e.status, e.text or e.reason, type(e).__name__)
    except Exception as e:
        log.exception("internal error on %s", request.path)
        return _error(500, f"internal error: {type(e).__name__}: {e}", "InternalServerError")
