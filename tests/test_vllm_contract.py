"""The `openai` engine against vLLM's answers: a stub server in a thread serves the fixtures in
tests/fixtures/vllm_answers/ (each written field for field from vLLM's protocol definitions, its serving code
and its tests; the README there names the vLLM files and commits), and the real engine talks to it.

Completions come from a toy model of eight tokens whose logprobs follow vLLM's definition of each
`--logprobs-mode` (and SGLang's default), so the engine's logprobs check meets every kind of server:
processed logprobs pass, raw ones and logits are refused with the flag to set, tempered ones without
the nucleus are used at top_p = 1 only, a model certain of every token leaves the check undecided."""

from __future__ import annotations

import asyncio
import copy
import json
import math
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ptrain.engine.base import Sampling
from ptrain.engine.logprobs_check import logprobs_verdict
from ptrain.engine.openai import OpenAIEngine
from ptrain.engine.openai_wire import completion_from_response
from ptrain.errors import EngineError

FIXTURES = Path(__file__).parent / "fixtures" / "vllm_answers"
FIX = "--logprobs-mode processed_logprobs"
VOCAB = list(range(100, 108))  # the toy model's token ids


def fixture(name: str) -> tuple[int, Any]:
    """A fixture's status and body, its `_source` note stripped."""
    data = {k: v for k, v in json.loads((FIXTURES / name).read_text()).items() if not k.startswith("_")}
    return data["status"], data["body"]


def renamed(name: str, adapter: str) -> tuple[int, Any]:
    """An answer about adapter `ptrain-v1` (as the fixture has it), about `adapter` instead."""
    status, body = fixture(name)
    return status, json.loads(json.dumps(body).replace("ptrain-v1", adapter))


# --- the toy model: eight tokens, logits fixed per position, logprobs as vLLM's sampler defines them ---------


def toy_logits(position: int, certain: bool) -> list[float]:
    if certain:  # one token at +25: every logprob of it is within 1e-10 of 0
        return [25.0 if i == position % len(VOCAB) else 0.0 for i in range(len(VOCAB))]
    rng = random.Random(position)
    return [rng.gauss(0.0, 1.5) for _ in VOCAB]


def log_softmax(values: list[float]) -> list[float]:
    top = max(values)
    total = top + math.log(sum(math.exp(v - top) for v in values if v > -math.inf))
    return [v - total for v in values]


def top_p_masked(logits: list[float], top_p: float) -> list[float]:
    """vLLM's apply_top_k_top_p for top-p: ascending order, cumulative probability <= 1 - p masked, the top kept."""
    order = sorted(range(len(logits)), key=lambda i: logits[i])
    probs = [math.exp(v) for v in log_softmax(logits)]
    masked, total = list(logits), 0.0
    for rank, i in enumerate(order):
        total += probs[i]
        if total <= 1 - top_p and rank < len(order) - 1:
            masked[i] = -math.inf
    return masked


def toy_step(logits: list[float], temperature: float, top_p: float, mode: str, rng: random.Random) -> tuple[int, float]:
    """The token sampled at one position and the logprob the server reports for it under `mode`."""
    greedy = temperature < 1e-5
    sampled = [v / (1.0 if greedy else temperature) for v in logits]
    if not greedy and top_p < 1:
        sampled = top_p_masked(sampled, top_p)
    if greedy:
        index = max(range(len(logits)), key=lambda i: logits[i])
    else:
        index = rng.choices(range(len(logits)), weights=[math.exp(v) for v in log_softmax(sampled)])[0]
    if mode == "raw_logprobs" or (greedy and mode != "processed_logits"):
        value = log_softmax(logits)[index]  # raw: before anything; greedy under processed: the logits' own
    elif mode == "processed_logprobs":
        value = log_softmax(sampled)[index]  # after temperature and top-p
    elif mode == "processed_logits":
        value = sampled[index]
    else:  # "tempered", SGLang's default: the tempered softmax, before top-p renormalises it
        value = log_softmax([v / temperature for v in logits])[index]
    return VOCAB[index], max(value, -9999.0)


# --- the stub server ---------------------------------------------------------------------------------------


class Stub:
    """vLLM's endpoints as the fixtures answer them; records every request. `hold` cleared: completions of
    token-id prompts (the engine's, not its probe's) wait until it is set again."""

    def __init__(self, mode: str = "processed_logprobs", *, token_ids: bool = True, certain: bool = False):
        self.mode, self.token_ids, self.certain = mode, token_ids, certain
        self.calls: list[tuple[str, dict]] = []
        self.unknown_fields: set[str] = set()
        self.adapters: dict[str, str] = {}
        self.hold, self.arrived = threading.Event(), threading.Event()
        self.hold.set()
        self.base = fixture("models.json")[1]["data"][0]
        self.fields = set(fixture("completion_request_fields.json")[1])
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.hold.set()
        self.server.shutdown()
        self.server.server_close()

    def posted(self, path: str) -> list[dict]:
        with self.lock:
            return [body for p, body in self.calls if p == path]

    def handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                self.answer(*stub.get(self.path))

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with stub.lock:
                    stub.calls.append((self.path, body))
                self.answer(*stub.post(self.path, body))

            def answer(self, status: int, body: Any) -> None:
                data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status)
                if not isinstance(body, str):  # vLLM's plain-text answers carry no content type
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        return Handler

    def get(self, path: str) -> tuple[int, Any]:
        assert path == "/v1/models", path
        status, models = fixture("models.json")
        adapter = models["data"][1]
        cards = [self.base] + [{**adapter, "id": name, "root": root} for name, root in self.adapters.items()]
        return status, {**models, "data": cards}

    def post(self, path: str, body: dict) -> tuple[int, Any]:
        name = body.get("lora_name", "")
        if path == "/v1/load_lora_adapter":
            if name in self.adapters:
                return renamed("load_lora_adapter_loaded.json", name)
            self.adapters[name] = body["lora_path"]
            return renamed("load_lora_adapter.json", name)
        if path == "/v1/unload_lora_adapter":
            if self.adapters.pop(name, None) is None:
                return renamed("unload_lora_adapter_missing.json", name)
            return renamed("unload_lora_adapter.json", name)
        assert path == "/v1/completions", path
        return self.complete(body)

    def complete(self, body: dict) -> tuple[int, Any]:
        self.unknown_fields |= set(body) - self.fields
        model = body.get("model")
        if model not in (self.base["id"], *self.adapters):
            return renamed("model_not_found.json", model)
        prompt = body["prompt"]
        if isinstance(prompt, list):
            self.arrived.set()
            assert self.hold.wait(30)
        rng = random.Random(body.get("seed"))
        steps = [toy_step(toy_logits(i, self.certain), body.get("temperature", 1.0), body.get("top_p", 1.0),
                          self.mode, rng) for i in range(body.get("max_tokens", 16))]  # fmt: skip
        ids = [token for token, _ in steps]
        as_ids = self.token_ids and body.get("return_tokens_as_token_ids")
        tokens = [f"token_id:{t}" if as_ids else f" w{t}" for t in ids]
        offsets = [sum(len(t) for t in tokens[:i]) for i in range(len(tokens))]
        prompt_ids = prompt if isinstance(prompt, list) else [1, 2, 3]
        status, template = fixture("completion_token_ids.json")
        response = copy.deepcopy(template)
        choice = response["choices"][0]
        choice["logprobs"].update(
            text_offset=offsets,
            token_logprobs=[value for _, value in steps],
            tokens=tokens,
            top_logprobs=[{token: value} for token, (_, value) in zip(tokens, steps, strict=True)],
        )
        with_ids = self.token_ids and body.get("return_token_ids")
        choice.update(text="".join(f" w{t}" for t in ids), finish_reason="length", stop_reason=None,
                      token_ids=ids if with_ids else None, prompt_token_ids=prompt_ids if with_ids else None)  # fmt: skip
        response["model"] = model
        response["usage"].update(prompt_tokens=len(prompt_ids), completion_tokens=len(ids),
                                 total_tokens=len(prompt_ids) + len(ids))  # fmt: skip
        return status, response


@pytest.fixture
def stub():
    server = Stub()
    yield server
    server.stop()


# --- vLLM's answers, read field for field --------------------------------------------------------------------


def test_the_fixtures_are_what_vllm_sends_and_note_their_source():
    for path in FIXTURES.glob("*.json"):
        data = json.loads(path.read_text())
        assert set(data) == {"_source", "status", "body"} and "@" in data["_source"], path.name
    choice = fixture("completion_token_ids.json")[1]["choices"][0]
    assert list(choice) == ["index", "text", "logprobs", "finish_reason", "stop_reason", "token_ids",
                            "prompt_logprobs", "prompt_token_ids"]  # fmt: skip


def test_a_vllm_completion_with_token_ids_gives_its_tokens_logprobs_and_prompt_length():
    done = completion_from_response(fixture("completion_token_ids.json")[1], 0, 7, "http://vllm/v1/completions")
    assert (done.token_ids, done.logprobs) == ((9707, 0, 151645), (-0.0312, -1.0467, -0.0021))
    assert (done.finish_reason, done.prompt_tokens, done.policy_version) == ("stop", 9, 7)


def test_a_vllm_that_ignores_return_token_ids_gives_them_through_its_token_id_strings():
    done = completion_from_response(fixture("completion_token_id_strings.json")[1], 5, 0, "http://vllm/v1/completions")
    assert (done.token_ids, done.finish_reason, done.prompt_tokens) == ((785, 3974, 13876, 38835), "length", 5)
    assert done.logprobs == (-2.3126, -0.8891, -0.0734, -0.0102)


def test_the_engine_takes_the_base_model_and_its_max_model_len_from_vllms_model_list(stub):
    engine = OpenAIEngine(stub.url)
    assert (engine.model, engine.context_window) == ("Qwen/Qwen2.5-0.5B-Instruct", 4096)
    assert engine.logprobs_mode == "processed"


async def test_generate_sends_only_fields_vllm_defines_and_reads_its_answer(stub):
    engine = OpenAIEngine(stub.url)
    try:
        done = await engine.generate([5, 6, 7], Sampling(max_new_tokens=4, temperature=0, stop_token_ids=(2,)))
    finally:
        await engine.close()
    [sent] = [body for body in stub.posted("/v1/completions") if isinstance(body["prompt"], list)]
    assert sent["model"] == "Qwen/Qwen2.5-0.5B-Instruct" and sent["prompt"] == [5, 6, 7] and sent["logprobs"] == 1
    assert sent["return_token_ids"] and sent["return_tokens_as_token_ids"] and sent["stop_token_ids"] == [2]
    assert stub.unknown_fields == set(), "vLLM ignores fields it does not define, silently"
    # no server default (vLLM's, from the model's generation_config.json) may change the distribution sampled
    assert (sent["top_k"], sent["min_p"], sent["repetition_penalty"], sent["presence_penalty"]) == (-1, 0, 1, 0)
    greedy = [toy_step(toy_logits(i, False), 0.0, 1.0, "processed_logprobs", random.Random()) for i in range(4)]
    assert done.token_ids == tuple(t for t, _ in greedy) and done.logprobs == pytest.approx([v for _, v in greedy])
    assert (done.finish_reason, done.prompt_tokens, done.policy_version) == ("length", 3, 0)


# --- the logprobs check --------------------------------------------------------------------------------------


def test_a_vllm_server_with_raw_logprobs_is_refused_with_the_flag_to_set():
    server = Stub("raw_logprobs")  # vLLM's default; also what 0.10.0 and 0.10.1 called processed
    try:
        with pytest.raises(EngineError, match="returns raw logprobs") as caught:
            OpenAIEngine(server.url)
    finally:
        server.stop()
    assert FIX in caught.value.fix and FIX in str(caught.value)


def test_a_server_that_returns_logits_is_refused():
    server = Stub("processed_logits")
    try:
        with pytest.raises(EngineError, match="neither processed nor raw") as caught:
            OpenAIEngine(server.url)
    finally:
        server.stop()
    assert FIX in caught.value.fix


async def test_tempered_logprobs_that_ignore_the_nucleus_are_used_at_top_p_1_only():
    server = Stub("tempered")  # SGLang's default
    engine = OpenAIEngine(server.url)
    try:
        assert engine.logprobs_mode == "tempered"
        with pytest.raises(EngineError, match="ignore the top-p nucleus") as caught:
            await engine.generate([5, 6], Sampling(max_new_tokens=2, top_p=0.9, seed=1))
        assert "top_p = 1" in caught.value.fix
        assert len((await engine.generate([5, 6], Sampling(max_new_tokens=2, seed=1))).token_ids) == 2
        assert len((await engine.generate([5, 6], Sampling(max_new_tokens=2, temperature=0, top_p=0.5))).token_ids)
    finally:
        await engine.close()
        server.stop()


def test_a_model_certain_of_every_token_leaves_the_check_undecided_and_the_switch_skips_it():
    server = Stub(certain=True)
    try:
        with pytest.raises(EngineError, match="could not tell") as caught:
            OpenAIEngine(server.url)
        assert "check_logprobs=False" in caught.value.fix and FIX in caught.value.fix
        probes = len(server.posted("/v1/completions"))
        assert OpenAIEngine(server.url, check_logprobs=False).logprobs_mode == "unchecked"
        assert len(server.posted("/v1/completions")) == probes  # skipped: no request
    finally:
        server.stop()


def test_a_server_that_gives_no_token_ids_is_not_judged_by_its_logprobs():
    server = Stub("raw_logprobs", token_ids=False)  # an API that returns text only
    try:
        assert OpenAIEngine(server.url).logprobs_mode == "text"
        assert len(server.posted("/v1/completions")) == 1
    finally:
        server.stop()


def test_the_verdict_needs_evidence_and_names_what_it_saw():
    greedy = [((1, 2, 3), (-0.9, -1.2, -1.1))]
    assert logprobs_verdict(greedy, [((1, 2, 3), (0.0, 0.0, 0.0))], [((1, 2, 3), (-0.2, -0.3, -0.1))])[0] == "processed"
    assert logprobs_verdict(greedy, greedy, greedy)[0] == "raw"
    assert logprobs_verdict(greedy, greedy, [((1, 2, 3), (-0.2, -0.3, -0.1))])[0] == "tempered"
    assert logprobs_verdict(greedy, [((1, 2, 3), (-3.0, -5.0, -4.0))], greedy)[0] == "other"
    verdict, why = logprobs_verdict([((1,), (-0.5,))], [((1,), (0.0,))], [((1,), (-0.1,))])
    assert verdict == "undecided" and "near-certain" in why
    # a sample that leaves the greedy path is compared only up to where it left it
    assert logprobs_verdict(greedy, [((1, 9, 3), (0.0, -8.0, -8.0))], greedy)[0] == "undecided"


# --- adapters and policy versions ----------------------------------------------------------------------------


async def wait_for(condition, timeout_s: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def test_a_request_in_flight_while_load_lora_runs_keeps_its_weights_and_label_and_then_frees_them(stub):
    engine = OpenAIEngine(stub.url)
    sampling = Sampling(max_new_tokens=2, seed=3)
    try:
        await engine.load_lora("ptrain-v1", "/runs/o1/adapters/v000001", 1)
        assert stub.posted("/v1/unload_lora_adapter") == []  # the base model was not this engine's to unload
        stub.hold.clear()
        stub.arrived.clear()
        in_flight = asyncio.create_task(engine.generate([5, 6, 7], sampling))
        await wait_for(stub.arrived.is_set)
        await engine.load_lora("ptrain-v2", "/runs/o1/adapters/v000002", 2)
        assert (engine.model, engine.policy_version) == ("ptrain-v2", 2)
        await asyncio.sleep(0.2)
        assert stub.posted("/v1/unload_lora_adapter") == [], "ptrain-v1 is still in use"
        stub.hold.set()
        old = await in_flight
        await wait_for(lambda: stub.posted("/v1/unload_lora_adapter"))
        new = await engine.generate([5, 6, 7], sampling)
    finally:
        stub.hold.set()
        await engine.close()
    sent = [body["model"] for body in stub.posted("/v1/completions") if isinstance(body["prompt"], list)]
    assert sent == ["ptrain-v1", "ptrain-v2"]
    assert (old.policy_version, new.policy_version) == (1, 2)
    assert stub.posted("/v1/unload_lora_adapter") == [{"lora_name": "ptrain-v1"}]
    assert set(stub.adapters) == {"ptrain-v2"}
    loads = stub.posted("/v1/load_lora_adapter")
    assert [load["lora_name"] for load in loads] == ["ptrain-v1", "ptrain-v2"]
    assert {"lora_name", "lora_path"} <= set(loads[0])  # LoadLoRAAdapterRequest; vLLM ignores the version we add


async def test_vllms_errors_are_engine_errors_with_its_message_and_a_failed_unload_only_warns(stub, caplog):
    engine = OpenAIEngine(stub.url)
    try:
        await engine.load_lora("ptrain-v1", "/a", 1)
        with pytest.raises(EngineError, match="HTTP 400: The lora adapter 'ptrain-v1' has already been loaded"):
            await engine.load_lora("ptrain-v1", "/a", 1)
        stub.adapters.clear()  # the server lost it (restarted): requests to it are 404s, as is its unload
        with pytest.raises(EngineError, match="HTTP 404: The model `ptrain-v1` does not exist"):
            await engine.generate([5], Sampling(max_new_tokens=1))
        await engine.load_lora("ptrain-v2", "/b", 2)
        await wait_for(lambda: stub.posted("/v1/unload_lora_adapter"))
        await wait_for(lambda: engine.stats().extra.get("failed_unloads") == 1)
    finally:
        await engine.close()
    assert "could not unload the superseded adapter ptrain-v1" in caplog.text and "cannot be found" in caplog.text
