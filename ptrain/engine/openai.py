"""The `openai` engine: token ids in and out over HTTP, from a vLLM server or `ptrain serve`.

Training needs the exact tokens the model sampled and their logprobs, never text tokenized again, so
this engine speaks only the token-level dialect of the OpenAI completions API that vLLM extends:

    POST {base_url}/completions
        prompt: [token ids]            max_tokens, temperature, top_p, seed, logprobs: 1
        stop_token_ids, skip_special_tokens: false, include_stop_str_in_output: true
        return_token_ids: true          -> choices[0].token_ids (newer vLLM, and ptrain serve)
        return_tokens_as_token_ids: true -> logprobs.tokens as "token_id:123" (older vLLM)
        ignore_eos: true                -> stop only on stop_token_ids, as the hf engine does
        top_k: -1, min_p: 0, penalties off -> no server default sampled with (vLLM's come from the model's
                                          generation_config.json)
    max_tokens is clamped to what the context window leaves after the prompt, as the hf engine does.

The logprobs must be those of the distribution each token was drawn from, which the trainer
recomputes as the old policy; vLLM gives them only with `--logprobs-mode processed_logprobs`. The
engine checks the server at start (`check_logprobs`, on by default; logprobs_check.py says how) and
refuses one that fails; one whose logprobs ignore top-p (SGLang's) is used at top_p = 1 only.
Answers are read in openai_wire.py.

A server that gives back neither form of token ids (an API that returns text only) puts the engine in
text mode when it has the model's tokenizer: from then on it sends the prompt as text with only the
standard fields, tokenizes the text it gets back itself, and marks each completion `text_mode`
(logprobs NaN), so its episodes can be evaluated but are stored as not trainable; its logprobs are
not checked. Without a tokenizer such a server is refused with an `EngineError`. Every failure
(connection refused, timeout, HTTP error, malformed JSON) is an `EngineError`, an infrastructure
failure and never the model's.

Each request is sent to the weights named now (`model`, an adapter after `load_lora`) and labelled
with their `policy_version`, both read before it is sent: an adapter swapped while it is in flight
changes neither. A superseded adapter is unloaded (POST /unload_lora_adapter) once no request in
flight uses it.

    engine = OpenAIEngine("http://127.0.0.1:8000/v1")   # the model and its context window from /models
    done = await engine.generate(prompt_ids, Sampling(max_new_tokens=256, stop_token_ids=(2,)))
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import json
import logging
import os
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

import aiohttp

from ptrain.engine.base import Completion, EngineStats, Sampling
from ptrain.engine.logprobs_check import VLLM_FIX, probe_logprobs
from ptrain.engine.openai_wire import (
    NEUTRAL,
    clip,
    completion_from_response,
    error_message,
    has_token_ids,
    text_completion,
)
from ptrain.errors import ConfigError, EngineError

log = logging.getLogger(__name__)
DEFAULT_CONTEXT_WINDOW = 8192


class OpenAIEngine:
    """An engine that is an OpenAI-compatible server; one aiohttp session, at most `max_concurrency` in flight."""

    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        context_window: int | None = None,
        *,
        api_key: str | None = None,
        max_concurrency: int = 256,
        timeout_s: float = 600.0,
        policy_version: int = 0,
        tokenizer: Any = None,
        check_logprobs: bool = True,
    ):
        """An engine for the server at `base_url` (such as http://127.0.0.1:8000/v1).

        Without a `model` it uses the first one the server lists; without a `context_window`, that
        model's `max_model_len` (vLLM and ptrain serve give it), else 8192. Either lookup is one
        blocking GET of /models, made here, so a server that is not there fails now, not mid-run.
        Then the logprobs check (a few blocking requests): `check_logprobs=False` skips it, for a
        server known to be right on which the probe cannot decide (a model near-certain on every
        probe prompt); the engine then takes the server's logprobs as they come."""
        if max_concurrency < 1 or timeout_s <= 0 or (context_window is not None and context_window < 2):
            raise ConfigError(
                f"max_concurrency {max_concurrency} must be at least 1, timeout_s {timeout_s} above 0 "
                f"and context_window {context_window} at least 2"
            )
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.timeout_s = timeout_s
        self.max_concurrency = max_concurrency
        self.policy_version = policy_version
        self.tokenizer = tokenizer  # the model's, for text mode
        self.text_mode = False  # set once the server answers with text only
        card: dict[str, Any] = {}
        if model is None or context_window is None:
            card = self._card(model)
        self.model = model or str(card["id"])
        window = card.get("max_model_len")
        self.context_window = context_window or (window if type(window) is int else DEFAULT_CONTEXT_WINDOW)
        # what the check found: "processed", "tempered" (no top-p), "text" (no token ids), "unchecked"
        self.logprobs_mode = "unchecked"
        if check_logprobs:
            self.logprobs_mode = self._check_logprobs(card.get("logprobs_mode"))
        self._limit = asyncio.Semaphore(max_concurrency)
        self._session: aiohttp.ClientSession | None = None
        self._stats = EngineStats()
        self._busy_since: float | None = None  # set while at least one request is in flight
        self._in_flight: collections.Counter[str] = collections.Counter()  # requests per model (adapter) name
        self._loaded: set[str] = set()  # adapters this engine loaded, the only ones it unloads
        self._superseded: set[str] = set()  # loaded adapters no longer used for new requests
        self._unloads: set[asyncio.Task] = set()

    def _card(self, model: str | None) -> dict[str, Any]:
        """The server's /models entry for `model` (the first when None), fetched synchronously."""
        url = f"{self.base_url}/models"
        text = self._http("GET", "/models", None, 30)
        try:
            cards = json.loads(text)["data"]
            names = [str(card["id"]) for card in cards]
        except (ValueError, KeyError, TypeError) as e:
            raise EngineError(f"GET {url} answered without a list of models: {clip(text)!r}") from e
        if not cards:
            raise EngineError(f"the server at {self.base_url} serves no models (its /models list is empty)")
        if model is None:
            return cards[0]
        for card in cards:
            if card["id"] == model:
                return card
        raise EngineError(
            f"the server at {self.base_url} does not serve {model!r}; it serves {', '.join(names)}",
            fix="pass one of those names as the model, or leave it out to use the first",
        )

    def _http(self, method: str, path: str, payload: dict[str, Any] | None, timeout_s: float) -> str:
        """One blocking request (for start-up, before any event loop work); the answer's text."""
        url = self.base_url + path
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        data = None
        if payload is not None:
            data, headers = json.dumps(payload).encode(), {**headers, "Content-Type": "application/json"}
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                return response.read().decode()
        except urllib.error.HTTPError as e:
            message = error_message(e.read().decode(errors="replace"))
            raise EngineError(f"{method} {url} answered HTTP {e.code}: {message}") from e
        except (OSError, ValueError) as e:
            raise EngineError(
                f"{method} {url} failed: {getattr(e, 'reason', e)}",
                fix="start the server (`ptrain serve`, or vLLM's `vllm serve`) or check the base URL",
            ) from e

    def _check_logprobs(self, reported: Any) -> str:
        """The server's logprobs mode, from its model card or `probe_logprobs`; refuses any but processed."""
        where = f"the server at {self.base_url}"
        if reported is not None:
            if reported != "processed_logprobs":
                raise EngineError(f"{where} reports logprobs_mode {reported!r}; training needs processed_logprobs",
                                  fix=VLLM_FIX)  # fmt: skip
            return "processed"

        def post(payload: dict[str, Any]) -> dict[str, Any]:
            text = self._http("POST", "/completions", {"model": self.model, **payload}, self.timeout_s)
            try:
                return json.loads(text)
            except ValueError as e:
                raise EngineError(f"POST {self.base_url}/completions answered malformed JSON: {clip(text)!r}") from e

        verdict, why = probe_logprobs(post, f"{self.base_url}/completions")
        if verdict == "text":
            log.info("%s gives back no token ids: its logprobs are not checked (text mode is not trained on)", where)
        elif verdict == "tempered":
            log.warning("%s returns tempered logprobs that ignore top-p (%s): top_p < 1 is refused", where, why)
        elif verdict == "raw":
            raise EngineError(f"{where} returns raw logprobs, before temperature and top-p ({why}), and training "
                              "needs those of the distribution sampled", fix=VLLM_FIX)  # fmt: skip
        elif verdict == "other":
            raise EngineError(f"{where} returns logprobs that are neither processed nor raw ({why}); are they "
                              "logits (--logprobs-mode processed_logits)?", fix=VLLM_FIX)  # fmt: skip
        elif verdict == "undecided":
            raise EngineError(f"the logprobs check could not tell what {where} returns: {why}",
                              fix=f"{VLLM_FIX}; if it has that, pass check_logprobs=False")  # fmt: skip
        return verdict

    # --- the Engine protocol --------------------------------------------------------------------

    async def generate(self, token_ids: Sequence[int], sampling: Sampling) -> Completion:
        prompt = [int(t) for t in token_ids]
        room = self.context_window - len(prompt)
        if room < 1:
            raise EngineError(
                f"the prompt has {len(prompt)} tokens but the model's context window is {self.context_window}, "
                "which must leave room for at least one new token",
                fix="shorten the prompt (truncate the history or the tool outputs)",
            )
        if self.logprobs_mode == "tempered" and sampling.temperature > 0 and sampling.top_p < 1:
            raise EngineError(
                f"top_p {sampling.top_p} with the server at {self.base_url}, whose logprobs ignore the top-p "
                "nucleus (they are not those of the distribution sampled)",
                fix=f"sample with top_p = 1 on this server, or {VLLM_FIX}",
            )
        queued = time.monotonic()
        self._stats.waiting += 1
        try:
            await self._limit.acquire()
        finally:
            self._stats.waiting -= 1
        model, version = self.model, self.policy_version  # the weights this request goes to, and their label
        self._in_flight[model] += 1  # load_lora does not unload `model` until this request is done
        started = time.monotonic()
        self._begin()
        try:
            payload = self._payload(model, prompt, room, sampling)
            body = await self._request("POST", "/completions", payload)
            url = f"{self.base_url}/completions"
            if not self.text_mode and self.tokenizer is not None and not has_token_ids(body):
                log.warning("%s gives back text only: text mode (episodes kept, but not trainable)", url)
                self.text_mode = True
            if self.text_mode:
                completion = text_completion(body, self.tokenizer, sampling.stop_token_ids, len(prompt), version,
                                             url)  # fmt: skip
            else:
                completion = completion_from_response(body, len(prompt), version, url)
        except EngineError:
            self._stats.extra["failed_requests"] = self._stats.extra.get("failed_requests", 0.0) + 1
            raise
        finally:
            self._end()
            self._limit.release()
            self._done_with(model)
        completion = dataclasses.replace(completion, queued_s=started - queued, generate_s=time.monotonic() - started)
        self._stats.requests += 1
        self._stats.prompt_tokens += completion.prompt_tokens
        self._stats.generated_tokens += len(completion.token_ids)
        return completion

    def _payload(self, model: str, prompt: list[int], room: int, sampling: Sampling) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": model,
            "prompt": prompt,
            "max_tokens": min(sampling.max_new_tokens, room),  # clamped to the window, as the hf engine does
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "logprobs": 1,
            "stop_token_ids": list(sampling.stop_token_ids),
            "ignore_eos": True,
            "skip_special_tokens": False,
            "include_stop_str_in_output": True,
            "return_token_ids": True,
            "return_tokens_as_token_ids": True,
            **NEUTRAL,
        }
        if sampling.seed is not None:
            payload["seed"] = sampling.seed
        return self._text_payload(payload, prompt, sampling) if self.text_mode else payload

    def _text_payload(self, payload: dict[str, Any], prompt: list[int], sampling: Sampling) -> dict[str, Any]:
        """Only the fields every completions API knows; the prompt and the stop tokens as text."""
        decode = lambda ids: self.tokenizer.decode(ids, skip_special_tokens=False)  # noqa: E731
        keep = ("model", "max_tokens", "temperature", "top_p", "seed", "logprobs")
        stops = [decode([t]) for t in sampling.stop_token_ids][:4]  # OpenAI's API takes at most four
        return {**{k: payload[k] for k in keep if k in payload}, "prompt": decode(prompt), "stop": stops or None}

    def stats(self) -> EngineStats:
        s = self._stats
        busy = s.busy_s + (time.monotonic() - self._busy_since if self._busy_since is not None else 0.0)
        return EngineStats(
            busy_s=busy,
            requests=s.requests,
            prompt_tokens=s.prompt_tokens,
            generated_tokens=s.generated_tokens,
            peak_batch=s.peak_batch,
            waiting=s.waiting,
            running=s.running,
            extra=dict(s.extra),
        )

    async def close(self) -> None:
        """Finish the unloads under way, then close the session."""
        if self._unloads:
            await asyncio.gather(*self._unloads, return_exceptions=True)
        if self._session is not None:
            await self._session.close()
            self._session = None

    # --- adapters -------------------------------------------------------------------------------

    async def load_lora(self, name: str, path: str, policy_version: int) -> None:
        """Load a peft adapter directory into the server and send every later request to it.

        vLLM's run-time endpoint (start it with --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True),
        also `ptrain serve`'s. The server reads `path` itself: it must see the same filesystem. The
        adapter it replaces, if this engine loaded it, is unloaded once no request in flight uses it."""
        payload = {"lora_name": name, "lora_path": path, "ptrain_policy_version": policy_version}
        await self._request("POST", "/load_lora_adapter", payload, json_answer=False)
        previous = self.model
        self.model, self.policy_version = name, policy_version
        self._loaded.add(name)
        self._superseded.discard(name)
        if previous != name and previous in self._loaded:
            self._superseded.add(previous)
            self._done_with(previous, finished=False)

    def _done_with(self, model: str, finished: bool = True) -> None:
        """A request to `model` has ended (or `model` was superseded): unload it if it is superseded and unused."""
        if finished:
            self._in_flight[model] -= 1
            if self._in_flight[model] <= 0:
                del self._in_flight[model]
        if model in self._superseded and not self._in_flight[model]:
            self._superseded.discard(model)
            task = asyncio.get_running_loop().create_task(self._unload(model))
            self._unloads.add(task)
            task.add_done_callback(self._unloads.discard)

    async def _unload(self, name: str) -> None:
        """vLLM's POST /unload_lora_adapter; a failure is logged, since the server goes on serving without it."""
        try:
            await self._request("POST", "/unload_lora_adapter", {"lora_name": name}, json_answer=False)
            self._loaded.discard(name)
        except EngineError as e:
            self._stats.extra["failed_unloads"] = self._stats.extra.get("failed_unloads", 0.0) + 1
            log.warning("could not unload the superseded adapter %s: %s", name, e)

    # --- HTTP -----------------------------------------------------------------------------------

    async def _request(
        self, method: str, path: str, payload: dict[str, Any] | None = None, json_answer: bool = True
    ) -> dict[str, Any]:
        url = self.base_url + path
        if self._session is None or self._session.closed:
            headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self.max_concurrency),  # aiohttp's default is 100
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=self.timeout_s),
            )
        try:
            async with self._session.request(method, url, json=payload) as response:
                text = await response.text()
                status = response.status
        except TimeoutError as e:
            raise EngineError(
                f"{method} {url} got no answer within {self.timeout_s:g} s",
                fix="check that the server is running and not overloaded, or raise timeout_s",
            ) from e
        except aiohttp.ClientError as e:
            raise EngineError(
                f"{method} {url} failed: {type(e).__name__}: {e}",
                fix="start the server (`ptrain serve`, or vLLM's `vllm serve`) or check the base URL",
            ) from e
        if status >= 400:
            raise EngineError(f"{method} {url} answered HTTP {status}: {error_message(text)}")
        if not json_answer:  # vLLM's adapter endpoints answer in plain text
            return {"text": text}
        try:
            body = json.loads(text)
        except ValueError as e:
            raise EngineError(f"{method} {url} answered with malformed JSON ({e}): {clip(text)!r}") from e
        if not isinstance(body, dict):
            raise EngineError(f"{method} {url} answered with JSON that is not an object: {clip(text)!r}")
        return body

    def _begin(self) -> None:
        s = self._stats
        if s.running == 0:
            self._busy_since = time.monotonic()
        s.running += 1
        s.peak_batch = max(s.peak_batch, s.running)

    def _end(self) -> None:
        s = self._stats
        s.running -= 1
        if s.running == 0 and self._busy_since is not None:
            s.busy_s += time.monotonic() - self._busy_since
            self._busy_since = None
