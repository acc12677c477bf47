"""The `openai` engine against a real `ptrain serve` subprocess serving the default model: the same
tokens and logprobs as the in-process engine, vLLM's request and response fields, the logprobs probe
passed, adapters loaded and unloaded, chat with tools, bad requests answered with 400s, and a server
that goes away raising EngineError instead of hanging. The same engine against vLLM's own answers:
tests/test_vllm_contract.py."""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest

from ptrain.engine.base import Sampling
from ptrain.engine.openai import OpenAIEngine
from ptrain.engine.openai_wire import completion_from_response
from ptrain.errors import EngineError
from ptrain.rollout.chat import ChatFormat
from ptrain.serve.chat_api import assistant_message, chat_prompt_ids
from ptrain.taskpack import Observation, ToolCall
from ptrain.tools import BashTool, SubmitTool

PTRAIN = str(Path(sys.executable).parent / "ptrain")
THREADS = max(1, (os.cpu_count() or 2) // 2)  # the server and the in-process engine share the cores
TOOLS = [{"type": "function", "function": dict(tool.schema)} for tool in (BashTool(), SubmitTool())]


@dataclass
class Server:
    process: subprocess.Popen
    url: str  # http://127.0.0.1:PORT/v1
    log: Path


def start_server(log: Path, *args: str) -> Server:
    """`ptrain serve` on a free port, once it answers /health."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    with log.open("w") as out:
        process = subprocess.Popen(
            [PTRAIN, "serve", "--port", "0", "--threads", str(THREADS), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = re.search(r"http://127\.0\.0\.1:(\d+)/v1", log.read_text())
        if found:
            with urllib.request.urlopen(found.group(0).removesuffix("/v1") + "/health", timeout=5) as response:
                assert response.status == 200
            return Server(process, found.group(0), log)
        if process.poll() is not None:
            break
        time.sleep(0.2)
    stop_server(process)
    pytest.fail(f"ptrain serve did not start:\n{log.read_text()}")


def stop_server(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def server(model_path, tmp_path_factory):
    served = start_server(tmp_path_factory.mktemp("serve") / "serve.log", "--max-batch", "8")
    try:
        yield served
    finally:
        stop_server(served.process)


@pytest.fixture(scope="module")
def tokenizer(model_path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_path)


@pytest.fixture(scope="module")
def fmt(tokenizer) -> ChatFormat:
    return ChatFormat(tokenizer)


@pytest.fixture(scope="module")
async def engine(server):
    engine = OpenAIEngine(server.url)
    yield engine
    await engine.close()


@pytest.fixture(scope="module")
async def hf_engine(model_path):
    import torch

    from ptrain.engine.hf import HFEngine

    threads = torch.get_num_threads()
    engine = HFEngine.load(model_path, threads=THREADS)
    yield engine
    await engine.close()
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def prompt(fmt) -> list[int]:
    return fmt.prompt_ids("You are a helpful assistant.", "Name three colours.", [])


async def post(url: str, body: object | str) -> tuple[int, dict]:
    data = body if isinstance(body, str) else json.dumps(body)
    async with aiohttp.ClientSession() as session, session.post(url, data=data) as response:
        return response.status, await response.json()


# --- the openai engine over HTTP ------------------------------------------------------------------


def test_engine_takes_the_model_and_its_context_window_from_the_server(engine):
    assert engine.name == "openai"
    assert engine.model == "smollm2-135m"
    assert engine.context_window == 8192
    assert engine.logprobs_mode == "processed"  # as the model card reports it


def test_ptrain_serve_passes_the_logprobs_probe_it_is_not_asked(server):
    """The card's `logprobs_mode` spares ptrain serve the probe; asked anyway, its answers agree with processed
    logprobs (the hf engine's: logits / T, renormalised over the top-p nucleus) and no other kind."""
    from ptrain.engine.logprobs_check import probe_logprobs

    def post(payload: dict) -> dict:
        data = json.dumps({"model": "smollm2-135m", **payload}).encode()
        request = urllib.request.Request(f"{server.url}/completions", data, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.loads(response.read())

    with urllib.request.urlopen(f"{server.url}/models", timeout=30) as response:
        assert json.loads(response.read())["data"][0]["logprobs_mode"] == "processed_logprobs"
    assert probe_logprobs(post, f"{server.url}/completions") == (
        "processed",
        "nucleus sample applied, low-temperature sample applied",
    )


async def test_greedy_completion_over_http_equals_the_in_process_engine(engine, hf_engine, prompt):
    greedy = Sampling(max_new_tokens=10, temperature=0)
    remote = await engine.generate(prompt, greedy)
    local = await hf_engine.generate(prompt, greedy)
    assert remote.token_ids == local.token_ids
    assert remote.logprobs == pytest.approx(local.logprobs, abs=1e-4)
    assert (remote.finish_reason, remote.prompt_tokens, remote.policy_version) == ("length", len(prompt), 0)
    stats = engine.stats()
    assert stats.requests >= 1 and stats.generated_tokens >= 10 and stats.busy_s > 0 and stats.running == 0


async def test_a_stop_token_ends_the_completion_and_is_included(engine, prompt):
    greedy = await engine.generate(prompt, Sampling(max_new_tokens=6, temperature=0))
    stop = greedy.token_ids[3]
    stopped = await engine.generate(prompt, Sampling(max_new_tokens=6, temperature=0, stop_token_ids=(stop,)))
    assert stopped.finish_reason == "stop"
    assert stopped.token_ids == greedy.token_ids[: greedy.token_ids.index(stop) + 1]
    assert len(stopped.logprobs) == len(stopped.token_ids)


async def test_concurrent_generates_all_complete_within_the_concurrency_limit(server, prompt):
    engine = OpenAIEngine(server.url, max_concurrency=2)
    try:
        done = await asyncio.gather(*(engine.generate(prompt, Sampling(max_new_tokens=2, seed=i)) for i in range(5)))
    finally:
        await engine.close()
    assert [len(c.token_ids) for c in done] == [2] * 5
    stats = engine.stats()
    assert (stats.requests, stats.generated_tokens, stats.peak_batch, stats.running, stats.waiting) == (5, 10, 2, 0, 0)


def test_an_engine_for_a_model_the_server_does_not_serve_fails_at_start_with_its_message(server):
    with pytest.raises(EngineError, match=r"does not serve 'gpt-4'; it serves smollm2-135m"):
        OpenAIEngine(server.url, model="gpt-4")
    with pytest.raises(EngineError, match=r"HTTP 404.*'gpt-4' does not exist"):  # its first request, the probe's
        OpenAIEngine(server.url, model="gpt-4", context_window=8192)


def test_token_ids_come_from_vllm_token_id_placeholders_when_the_choice_has_none():
    body = {
        "choices": [
            {
                "text": "hi",
                "finish_reason": "stop",
                "logprobs": {"tokens": ["token_id:17", "token_id:2"], "token_logprobs": [-0.5, -0.25]},
            }
        ],
        "usage": {"prompt_tokens": 3},
    }
    done = completion_from_response(body, 3, 7, "http://vllm/v1/completions")
    assert (done.token_ids, done.logprobs, done.finish_reason, done.policy_version) == (
        (17, 2),
        (-0.5, -0.25),
        "stop",
        7,
    )


def test_a_server_that_gives_only_text_is_refused_with_a_reason():
    body = {"choices": [{"text": "hi", "finish_reason": "stop", "logprobs": {"tokens": ["h", "i"]}}]}
    with pytest.raises(EngineError, match="no token ids"):
        completion_from_response(body, 3, 0, "http://api/v1/completions")


def test_an_engine_for_a_server_that_is_not_there_fails_at_once():
    with pytest.raises(EngineError, match="failed"):
        OpenAIEngine("http://127.0.0.1:9/v1")  # the discard port: nothing listens


# --- the server's own API -------------------------------------------------------------------------


async def test_completions_return_n_choices_with_token_ids_and_logprobs(server, prompt):
    body = {"prompt": prompt, "max_tokens": 4, "n": 3, "seed": 1, "logprobs": 0, "return_token_ids": True}
    status, done = await post(f"{server.url}/completions", body)
    assert status == 200, done
    assert [choice["index"] for choice in done["choices"]] == [0, 1, 2]
    for choice in done["choices"]:
        assert len(choice["token_ids"]) == len(choice["logprobs"]["token_logprobs"]) == 4
        assert choice["prompt_token_ids"] == prompt and choice["finish_reason"] == "length"
    assert done["usage"] == {"prompt_tokens": len(prompt), "completion_tokens": 12, "total_tokens": len(prompt) + 12}
    assert done["ptrain_policy_version"] == 0


async def test_a_text_prompt_is_tokenized_and_the_text_comes_back(server):
    status, done = await post(f"{server.url}/completions", {"prompt": "The sky is", "max_tokens": 3, "temperature": 0})
    assert status == 200, done
    assert isinstance(done["choices"][0]["text"], str) and done["usage"]["completion_tokens"] == 3


async def test_chat_completions_answer_with_an_assistant_message(server):
    body = {
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "List the files."}],
        "tools": TOOLS,
        "max_tokens": 8,
        "temperature": 0,
        "return_token_ids": True,
    }
    status, done = await post(f"{server.url}/chat/completions", body)
    assert status == 200, done
    choice = done["choices"][0]
    assert choice["message"]["role"] == "assistant" and choice["finish_reason"] in ("stop", "length", "tool_calls")
    assert isinstance(choice["message"]["tool_calls"], list) and len(choice["token_ids"]) <= 8


def test_hermes_tool_calls_in_a_reply_become_openai_tool_calls():
    text = 'Let me look.\n<tool_call>\n{"name": "bash", "arguments": {"command": "ls -la"}}\n</tool_call>'
    message = assistant_message(text)
    assert message["content"] == "Let me look."
    [call] = message["tool_calls"]
    assert call["type"] == "function" and call["id"].startswith("call_")
    assert call["function"]["name"] == "bash" and json.loads(call["function"]["arguments"]) == {"command": "ls -la"}
    assert assistant_message("Just words.") == {"role": "assistant", "content": "Just words.", "tool_calls": []}
    broken = assistant_message("<tool_call>\n{not json}\n</tool_call>")
    assert broken["tool_calls"] == [] and "{not json}" in broken["content"] and broken["ptrain_tool_call_errors"]


def test_a_chat_renders_exactly_as_an_episode_of_the_same_turns(fmt):
    call = ToolCall("bash", {"command": "ls"})
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "List the files."},
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
    ]
    tools = [t["function"] for t in TOOLS]
    episode = fmt.prompt_ids("Be brief.", "List the files.", tools)
    episode += fmt.encode(fmt.assistant_text([call], thought="Looking.")) + fmt.assistant_suffix_ids([])
    episode += fmt.tool_result_ids([Observation("a.txt")])
    assert chat_prompt_ids(fmt, messages[:2], tools) == fmt.prompt_ids("Be brief.", "List the files.", tools)
    assert chat_prompt_ids(fmt, messages, tools) == episode


BAD_REQUESTS = [
    ("completions", "{not json", "not valid JSON"),
    ("completions", [1, 2], "JSON object"),
    ("completions", {"max_tokens": 2}, "`prompt` must be"),
    ("completions", {"prompt": [1, "two"]}, "`prompt` must be"),
    ("completions", {"prompt": [10**9]}, "token ids in"),
    ("completions", {"prompt": [1, 2], "max_tokens": "ten"}, "`max_tokens` must be an integer"),
    ("completions", {"prompt": [1, 2], "temperature": -1}, "temperature"),
    ("completions", {"prompt": [1, 2], "n": 0}, "`n` must be an integer"),
    ("completions", {"prompt": [1] * 9000}, "maximum context length is 8192"),
    ("completions", {"prompt": [1, 2], "max_tokens": 8191}, "lower max_tokens"),
    ("completions", {"prompt": [1, 2], "stop": ["the end"]}, "single tokens"),
    ("completions", {"prompt": [1, 2], "stream": True}, "stream"),
    ("completions", {"prompt": [1, 2], "logprobs": 5}, "sampled token"),
    ("chat/completions", {"messages": []}, "`messages` must be"),
    ("chat/completions", {"messages": [{"role": "wizard", "content": "hi"}]}, "role 'wizard'"),
    ("chat/completions", {"messages": [{"role": "user", "content": "hi"}], "tools": [{"x": 1}]}, "`tools` must be"),
]


@pytest.mark.parametrize(("path", "body", "says"), BAD_REQUESTS)
async def test_a_bad_request_gets_400_with_a_message_and_the_server_keeps_serving(server, path, body, says):
    status, answer = await post(f"{server.url}/{path}", body)
    assert status == 400, answer
    assert answer["error"]["type"] and says in answer["error"]["message"]
    status, done = await post(f"{server.url}/completions", {"prompt": [1, 2], "max_tokens": 1})
    assert status == 200 and done["choices"][0]["finish_reason"] == "length"


async def test_metrics_report_the_engine_stats(server):
    async with aiohttp.ClientSession() as session, session.get(server.url.removesuffix("/v1") + "/metrics") as response:
        stats = await response.json()
    assert response.status == 200 and stats["requests"] >= 1 and stats["policy_version"] == 0


# --- the server going away ------------------------------------------------------------------------


async def test_a_stopped_server_exits_cleanly_and_the_next_generate_raises_engine_error(model_path, tmp_path, prompt):
    served = start_server(tmp_path / "serve.log")
    engine = OpenAIEngine(served.url, timeout_s=60)
    try:
        assert len((await engine.generate(prompt, Sampling(max_new_tokens=2))).token_ids) == 2
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=30) == 0, served.log.read_text()
        assert "stopped" in served.log.read_text()
        with pytest.raises(EngineError, match="failed"):
            await asyncio.wait_for(engine.generate(prompt, Sampling(max_new_tokens=2)), timeout=30)
    finally:
        stop_server(served.process)
        await engine.close()


# --- text mode: a server that gives back text only ------------------------------------------------


def test_a_text_only_completion_is_tokenized_here_with_nan_logprobs_and_the_stop_token(tokenizer):
    from ptrain.engine.openai_wire import has_token_ids, text_completion

    body = {"choices": [{"text": "Hello there", "finish_reason": "stop"}]}
    assert not has_token_ids(body)
    done = text_completion(body, tokenizer, (2,), 7, 3, "http://api/v1/completions")
    assert done.text_mode and done.finish_reason == "stop" and done.token_ids[-1] == 2
    assert tokenizer.decode(done.token_ids[:-1]) == "Hello there"
    assert all(math.isnan(lp) for lp in done.logprobs) and done.policy_version == 3
    with pytest.raises(EngineError, match="finished a completion with 'content_filter'"):
        text_completion({"choices": [{"text": "", "finish_reason": "content_filter"}]}, tokenizer, (2,), 7, 0, "u")


async def test_against_a_text_only_server_the_engine_switches_to_text_mode(model_path, tmp_path, tokenizer, prompt):
    served = start_server(tmp_path / "serve.log", "--text-only")
    engine = OpenAIEngine(served.url, tokenizer=tokenizer, timeout_s=120)
    strict = OpenAIEngine(served.url, timeout_s=120)
    try:
        sampling = Sampling(max_new_tokens=6, temperature=0)
        first = await engine.generate(prompt, sampling)
        assert first.text_mode and engine.text_mode and len(first.token_ids) >= 1
        second = await engine.generate(prompt, sampling)  # now the prompt goes as text, with standard fields only
        assert second.text_mode and second.token_ids == first.token_ids
        with pytest.raises(EngineError, match="no token ids"):
            await strict.generate(prompt, sampling)
    finally:
        stop_server(served.process)
        await engine.close()
        await strict.close()


async def test_a_lora_adapter_loaded_at_run_time_is_what_the_server_then_samples(model_path, prompt, tmp_path):
    """vLLM's /v1/load_lora_adapter on `ptrain serve`: the adapter's merged model, at the version given; the
    adapter it supersedes is unloaded (its name no longer served) through /v1/unload_lora_adapter."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from ptrain.engine.hf import HFEngine

    policy = get_peft_model(AutoModelForCausalLM.from_pretrained(model_path),
                            LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]))  # fmt: skip
    with torch.no_grad():
        for name, p in policy.named_parameters():
            if "lora_B" in name:
                p.normal_(std=0.05)
    policy.save_pretrained(tmp_path / "adapter")
    merged = HFEngine(policy.merge_and_unload(), max_batch=1)
    served = start_server(tmp_path / "serve.log")
    engine = OpenAIEngine(served.url)
    greedy = Sampling(max_new_tokens=8, temperature=0)
    try:
        before = await engine.generate(prompt, greedy)
        await engine.load_lora("ptrain-v3", str(tmp_path / "adapter"), 3)
        after, expected = await engine.generate(prompt, greedy), await merged.generate(prompt, greedy)
        assert engine.model == "ptrain-v3" and (before.policy_version, after.policy_version) == (0, 3)
        assert after.token_ids == expected.token_ids
        assert after.logprobs == pytest.approx(expected.logprobs, abs=1e-3)
        assert before.logprobs != pytest.approx(after.logprobs, abs=1e-3)
        with pytest.raises(EngineError, match="cannot read the adapter"):
            await engine.load_lora("ptrain-v4", str(tmp_path / "missing"), 4)
        await engine.load_lora("ptrain-v5", str(tmp_path / "adapter"), 5)  # supersedes ptrain-v3, which is unloaded
        await engine.close()  # waits for the unload
        status, answer = await post(f"{served.url}/completions", {"model": "ptrain-v3", "prompt": [1], "max_tokens": 1})
        assert status == 404 and "'ptrain-v3' does not exist" in answer["error"]["message"]
        assert (await engine.generate(prompt, greedy)).policy_version == 5
        status, answer = await post(f"{served.url}/unload_lora_adapter", {"lora_name": "ptrain-v3"})
        assert status == 404 and answer["error"]["message"] == "The lora adapter 'ptrain-v3' cannot be found."
    finally:
        await engine.close()
        await merged.close()
        stop_server(served.process)
