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

The logprobs must be those of the distribution each token was drawn from (logits / temperature,
renormalised over the top-p nucleus), which the trainer recomputes as the old policy. vLLM returns
that only with `--logprobs-mode processed_logprobs` (0.10.2 and newer; its default `raw_logprobs` is
before temperature and top-p), and says nothing of its mode over HTTP, so the engine checks at start
(`check_logprobs`, on by default) and refuses a server that fails: a model card reporting
`logprobs_mode` (ptrain serve's does) is taken at its word; otherwise `probe_logprobs` samples a few
short prompts greedily, at T = 1 under a nucleus of one token, and at a low temperature, and
`logprobs_verdict` says which transform the answers agree with (see there why it is decisive). A
server whose logprobs are tempered but ignore the nucleus (SGLang's) is used at top_p = 1 only.

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
import math
import os
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

import aiohttp

from ptrain.engine.base import FINISH_REASONS, Completion, EngineStats, Sampling
from ptrain.errors import ConfigError, EngineError

log = logging.getLogger(__name__)
DEFAULT_CONTEXT_WINDOW = 8192
TOKEN_ID_PREFIX = "token_id:"  # vLLM's return_tokens_as_token_ids placeholder
VLLM_FIX = "start vLLM (0.10.2 or newer) with --logprobs-mode processed_logprobs"
# sent with every request: left out, vLLM takes them from the model's generation_config.json (its default
# --generation-config auto), and a top_k or penalty there would change the distribution sampled
NEUTRAL = {"top_k": -1, "min_p": 0.0, "repetition_penalty": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0}


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
            raise EngineError(f"GET {url} answered without a list of models: {_clip(text)!r}") from e
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
            message = _error_message(e.read().decode(errors="replace"))
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
                raise EngineError(f"POST {self.base_url}/completions answered malformed JSON: {_clip(text)!r}") from e

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
            raise EngineError(f"{method} {url} answered HTTP {status}: {_error_message(text)}")
        if not json_answer:  # vLLM's adapter endpoints answer in plain text
            return {"text": text}
        try:
            body = json.loads(text)
        except ValueError as e:
            raise EngineError(f"{method} {url} answered with malformed JSON ({e}): {_clip(text)!r}") from e
        if not isinstance(body, dict):
            raise EngineError(f"{method} {url} answered with JSON that is not an object: {_clip(text)!r}")
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


# --- the logprobs check -----------------------------------------------------------------------

PROBE_PROMPTS = ("Once upon a time", "My favourite word is", "Here is a random number:", "Name any animal:")
PROBE_TOKENS = 16
PROBE_SEED = 1234
PROBE_TEMPERATURE = 0.1  # divides the logits by 10: the greedy token's logprob moves well towards 0
PROBE_TOP_P = 1e-4  # a nucleus of the most likely token alone wherever that token has p >= 1e-4
PROBE_MIN_NATS = 3.0  # the greedy tokens' surprisal the comparisons need, summed over positions
PROBE_NOISE = 0.02  # per position: logits computed in another batch (bfloat16 kernels) move this much
PROBE_SETTINGS = {"greedy": (0.0, 1.0), "nucleus": (1.0, PROBE_TOP_P), "tempered": (PROBE_TEMPERATURE, 1.0)}


def probe_logprobs(post: Any, url: str) -> tuple[str, str]:
    """Ask the server (`post(payload) -> response body`) the probe's questions; `logprobs_verdict`'s answer.

    Each prompt is sampled three times, PROBE_TOKENS tokens each: greedy, at T = 1 with top_p
    PROBE_TOP_P, and at T = PROBE_TEMPERATURE (both seeded). Prompts are added until the comparisons
    have the evidence they need or the prompts run out. ("text", why) if the server gives no token ids."""
    runs: dict[str, list[tuple[tuple[int, ...], tuple[float, ...]]]] = {kind: [] for kind in PROBE_SETTINGS}
    verdict, why = "undecided", "no prompt was asked"
    for prompt in PROBE_PROMPTS:
        for kind, (temperature, top_p) in PROBE_SETTINGS.items():
            body = post({"prompt": prompt, "max_tokens": PROBE_TOKENS, "temperature": temperature, "top_p": top_p,
                         "seed": PROBE_SEED, "logprobs": 1, "ignore_eos": True, "skip_special_tokens": False,
                         "return_token_ids": True, "return_tokens_as_token_ids": True, **NEUTRAL})  # fmt: skip
            if not has_token_ids(body):
                return "text", "no token ids"
            done = completion_from_response(body, 0, 0, url)
            runs[kind].append((done.token_ids, done.logprobs))
        verdict, why = logprobs_verdict(runs["greedy"], runs["nucleus"], runs["tempered"])
        if verdict != "undecided":
            break
    return verdict, why


def logprobs_verdict(greedy: Sequence, nucleus: Sequence, tempered: Sequence) -> tuple[str, str]:
    """Which transform a server's logprobs agree with, from the probe's three samples of each prompt.

    Each argument is one (token ids, logprobs) per prompt. A position is compared where a sample
    still follows the greedy one (same prefix, same token), against the greedy logprob r, which is
    of the untransformed distribution whatever the server's mode (vLLM, SGLang and the hf engine
    score greedy tokens so). The hypotheses predict, for the greedy token g:

        nucleus (T = 1, top_p 1e-4):  processed 0 exactly (a nucleus of g alone);  raw and tempered r
        tempered (T = 0.25):          processed and tempered log softmax(l / T)_g > r;  raw r

    Raw logprobs cannot move between the samples, since they depend on the token and its prefix
    only; processed ones must. Each comparison is decisive once the compared greedy tokens carry
    PROBE_MIN_NATS of surprisal (-sum r): the hypotheses are then further apart than noise
    (PROBE_NOISE per position + 10% of the surprisal) allows. A model near-certain at every compared
    position (r near 0, where no transform changes much) leaves it "undecided".

    Returns (verdict, why): "processed" (temperature and nucleus applied), "tempered" (temperature
    only), "raw", "other" (agrees with neither, or values above 0: logits) or "undecided"."""
    if any(x > 1e-3 for _, values in (*greedy, *nucleus, *tempered) for x in values):
        return "other", "some values are above 0, so they are not logprobs"
    results = []
    for name, runs in (("nucleus", nucleus), ("tempered", tempered)):
        pairs = [(r, x) for g, o in zip(greedy, runs, strict=True) for r, x in _common_prefix(g, o)]
        nats = -sum(r for r, _ in pairs)
        band = PROBE_NOISE * len(pairs) + 0.1 * nats
        moved = sum(abs(x - r) for r, x in pairs)
        if nats < PROBE_MIN_NATS:
            outcome = "undecided"
        elif moved <= band:
            outcome = "unchanged"
        elif name == "nucleus":
            outcome = "applied" if sum(abs(x) for _, x in pairs) <= band else "neither"
        else:
            outcome = "applied" if sum(x - r for r, x in pairs) > band else "neither"
        results.append(outcome)
        log.debug("logprobs probe, %s: %d positions, %.2f nats, moved %.3f (band %.3f): %s",
                  name, len(pairs), nats, moved, band, outcome)  # fmt: skip
    why = f"nucleus sample {results[0]}, low-temperature sample {results[1]}"
    table = {("applied", "applied"): "processed", ("unchanged", "applied"): "tempered",
             ("unchanged", "unchanged"): "raw"}  # fmt: skip
    if "undecided" in results:
        return "undecided", f"the model was near-certain on the probe prompts ({why})"
    return table.get((results[0], results[1]), "other"), why


def _common_prefix(greedy: tuple, other: tuple) -> list[tuple[float, float]]:
    """(greedy logprob, other logprob) at each position where `other` still follows the greedy tokens."""
    pairs = []
    for g, r, o, x in zip(*greedy, *other, strict=False):
        if g != o:
            break
        pairs.append((r, x))
    return pairs


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
                f"{url} gave {len(ids)} tokens but logprobs.token_logprobs {_clip(json.dumps(values))}; "
                "training needs one logprob per token",
                fix="use a server that returns completion logprobs (vLLM, or `ptrain serve`)",
            )
        lps = tuple(float(v) for v in values)
        finish = choice.get("finish_reason")
        version = choice.get("ptrain_policy_version", body.get("ptrain_policy_version", policy_version))
        prompt = (body.get("usage") or {}).get("prompt_tokens", prompt_tokens)
        completion = Completion(ids, lps, finish, int(version), int(prompt))
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        raise EngineError(f"{url} answered with an unexpected completion: {_clip(json.dumps(body))}") from e
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
        raise EngineError(f"{url} answered with an unexpected completion: {_clip(json.dumps(body))}") from e
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


def _error_message(text: str) -> str:
    """The server's own message from an OpenAI-style error body, else the body itself."""
    try:
        body = json.loads(text)
    except ValueError:
        return _clip(text.strip()) or "(empty body)"
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    if isinstance(error, str):
        return error
    if isinstance(body, dict) and body.get("message"):
        return str(body["message"])
    return _clip(text.strip())


def _clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
