"""The in-process engine on the real small model: continuous batching, sampling, admission, failures."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
import torch

from ptrain.engine.base import Engine, Sampling
from ptrain.engine.hf import HFEngine, kv_peak
from ptrain.errors import EngineError

GREEDY = Sampling(max_new_tokens=16, temperature=0)
QUESTIONS = [
    "What is 2+2?",
    "Hi",
    "Explain how a compiler turns source code into machine code, step by step, with an example in C.",
    "How do I reverse a list in Python?",
]


@pytest.fixture(scope="module")
def model(model_path):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(model_path).eval()


@pytest.fixture(scope="module")
def prompts(model_path) -> list[list[int]]:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    chat = [[{"role": "user", "content": q}] for q in QUESTIONS]
    return [tokenizer.apply_chat_template(c, add_generation_prompt=True)["input_ids"] for c in chat]


@pytest.fixture(scope="module")
def greedy(model, prompts) -> list[list[int]]:
    """`model.generate` one prompt at a time: the reference for greedy decoding."""
    with torch.inference_mode():
        return [
            # an explicit mask: generate would otherwise take the prompt's <|im_end|> (the pad id) for padding
            model.generate(
                torch.tensor([p]), attention_mask=torch.ones(1, len(p), dtype=torch.long), do_sample=False,
                max_new_tokens=GREEDY.max_new_tokens, eos_token_id=None,
            )[0, len(p) :].tolist()
            for p in prompts
        ]  # fmt: skip


@pytest.fixture
async def engine(model):
    engine = HFEngine(model, name="smollm2-135m", seed=0)
    yield engine
    await engine.close()


async def until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(60):
        while not condition():
            await asyncio.sleep(0.005)


def full_forward_logprobs(model, prompt: list[int], tokens: tuple[int, ...], temperature: float) -> torch.Tensor:
    with torch.inference_mode():
        logits = model(torch.tensor([prompt + list(tokens)])).logits[0, len(prompt) - 1 : -1].float()
        chosen = torch.log_softmax(logits / temperature, dim=-1).gather(1, torch.tensor(tokens)[:, None])
        return chosen[:, 0]


def test_the_engine_satisfies_the_engine_contract(engine):
    assert isinstance(engine, Engine)
    assert (engine.name, engine.model, engine.context_window) == ("hf", "smollm2-135m", 8192)


def test_the_kv_peak_counts_padding_only_while_rows_live():
    assert kv_peak([(100, 28)]) == 128
    assert kv_peak([(1000, 10), (10, 100)]) == 2 * 1010  # the short-lived long row pads the other one
    assert kv_peak([(10, 1000), (10, 10)]) == 1010  # the short row is gone before the width grows


async def test_continuous_batching_matches_one_at_a_time_greedy_generation(engine, prompts, greedy):
    first = asyncio.create_task(engine.generate(prompts[0], GREEDY))
    await until(lambda: engine.stats().generated_tokens >= 2)  # the first is running alone
    middle = [asyncio.create_task(engine.generate(p, GREEDY)) for p in prompts[1:3]]
    await until(lambda: engine.stats().generated_tokens >= 10)  # these joined mid-way
    last = asyncio.create_task(engine.generate(prompts[3], GREEDY))
    done = await asyncio.gather(first, *middle, last)
    assert [list(c.token_ids) for c in done] == greedy
    assert all(c.finish_reason == "length" and c.generate_s > 0 for c in done)
    assert [c.prompt_tokens for c in done] == [len(p) for p in prompts]
    stats = engine.stats()
    assert stats.peak_batch >= 3 and (stats.requests, stats.running, stats.waiting) == (4, 0, 0)
    assert stats.generated_tokens == 4 * 16 and stats.prompt_tokens == sum(map(len, prompts)) and stats.busy_s > 0


async def test_logprobs_are_those_of_a_full_forward_pass_at_the_sampling_temperature(engine, model, prompts):
    cases = [
        (prompts[0], Sampling(max_new_tokens=12, temperature=1.0)),
        (prompts[2], Sampling(max_new_tokens=12, temperature=0.7)),
    ]
    done = await asyncio.gather(*(engine.generate(p, s) for p, s in cases))
    for (prompt, sampling), completion in zip(cases, done, strict=True):
        expected = full_forward_logprobs(model, prompt, completion.token_ids, sampling.temperature)
        assert torch.allclose(torch.tensor(completion.logprobs), expected, atol=1e-4)


async def test_a_stop_token_ends_with_stop_and_max_new_tokens_with_length(engine, prompts, greedy):
    stop = greedy[0].index(2)  # "... is 4.<|im_end|>"
    stopped, cut = await asyncio.gather(
        engine.generate(prompts[0], Sampling(max_new_tokens=16, temperature=0, stop_token_ids=(2,))),
        engine.generate(prompts[1], Sampling(max_new_tokens=4, temperature=0)),
    )
    assert (list(stopped.token_ids), stopped.finish_reason) == (greedy[0][: stop + 1], "stop")
    assert (list(cut.token_ids), cut.finish_reason) == (greedy[1][:4], "length")
    assert len(cut.logprobs) == 4


async def test_the_same_seed_gives_the_same_sample_alone_and_in_a_batch(engine, prompts):
    sampling = Sampling(max_new_tokens=10, temperature=1.0, top_p=0.9, seed=1234)
    alone = await engine.generate(prompts[1], sampling)
    others = [
        engine.generate(p, Sampling(max_new_tokens=10, seed=seed)) for seed, p in enumerate([prompts[0], prompts[2]])
    ]
    batched, *_ = await asyncio.gather(engine.generate(prompts[1], sampling), *others)
    assert batched.token_ids == alone.token_ids
    assert batched.logprobs == pytest.approx(alone.logprobs, abs=1e-4)


async def test_a_request_waits_for_kv_budget_and_an_impossible_one_fails_at_once(model, prompts, greedy):
    sampling = Sampling(max_new_tokens=8, temperature=0)
    engine = HFEngine(model, kv_budget_tokens=len(prompts[2]) + 8)  # room for one request at a time
    try:
        first, second = await asyncio.gather(
            engine.generate(prompts[0], sampling), engine.generate(prompts[3], sampling)
        )
        assert (list(first.token_ids), list(second.token_ids)) == (greedy[0][:8], greedy[3][:8])
        assert second.queued_s > 0 and engine.stats().peak_batch == 1
        with pytest.raises(EngineError, match="KV slots"):
            await engine.generate(prompts[2], Sampling(max_new_tokens=9))
        with pytest.raises(EngineError, match="context window is 8192"):
            await engine.generate([1] * 8192, Sampling(max_new_tokens=1))
    finally:
        await engine.close()


async def test_a_small_request_overtakes_a_big_one_that_does_not_fit_yet(model, prompts):
    engine = HFEngine(model, kv_budget_tokens=len(prompts[2]) + 29)  # the big one fits only alone
    try:
        running = asyncio.create_task(engine.generate(prompts[1], Sampling(max_new_tokens=12, temperature=0)))
        await until(lambda: engine.stats().running == 1)
        big = asyncio.create_task(engine.generate(prompts[2], Sampling(max_new_tokens=29, temperature=0)))
        await until(lambda: engine.stats().waiting == 1)  # queued first, but it does not fit beside the running one
        small = await engine.generate([1, 2, 3], Sampling(max_new_tokens=2, temperature=0))
        assert not big.done() and len(small.token_ids) == 2
        assert (len((await big).token_ids), (await running).finish_reason) == (29, "length")
    finally:
        await engine.close()


async def test_an_out_of_vocabulary_token_fails_only_its_own_request(engine, prompts, greedy):
    bad, good = await asyncio.gather(
        engine.generate([1, 2, 49152 + 7], GREEDY),
        engine.generate(prompts[1], Sampling(max_new_tokens=6, temperature=0)),
        return_exceptions=True,
    )
    assert isinstance(bad, EngineError) and "outside the vocabulary" in str(bad)
    assert list(good.token_ids) == greedy[1][:6]


async def test_cancelling_one_request_drops_it_and_leaves_the_others_alone(engine, prompts, greedy):
    tasks = [asyncio.create_task(engine.generate(p, GREEDY)) for p in prompts[:3]]
    await until(lambda: engine.stats().running == 3)
    tasks[1].cancel()
    first, third = await asyncio.gather(tasks[0], tasks[2])
    assert (list(first.token_ids), list(third.token_ids)) == (greedy[0], greedy[2])
    assert tasks[1].cancelled()
    assert engine.stats().generated_tokens < 3 * 16  # the cancelled row stopped decoding
    assert (engine.stats().running, engine.stats().waiting) == (0, 0)


async def test_closing_fails_what_is_running_and_waiting_and_refuses_more(model, prompts):
    engine = HFEngine(model, kv_budget_tokens=len(prompts[2]) + 16)
    tasks = [asyncio.create_task(engine.generate(p, GREEDY)) for p in prompts[:3]]
    await until(lambda: engine.stats().running == 1 and engine.stats().waiting == 2)
    await engine.close()
    for outcome in await asyncio.gather(*tasks, return_exceptions=True):
        assert isinstance(outcome, EngineError) and "engine closed" in str(outcome)
    with pytest.raises(EngineError, match="engine closed"):
        await engine.generate(prompts[0], GREEDY)


async def test_a_failing_forward_pass_fails_every_request_and_the_engine(engine, model, prompts):
    def fault(module, args, kwargs):
        raise RuntimeError("simulated device fault")

    hook = None

    def break_model(module):
        nonlocal hook
        hook = module.register_forward_pre_hook(fault, with_kwargs=True)

    try:
        engine.update_weights(break_model, policy_version=1)
        outcomes = await asyncio.gather(*(engine.generate(p, GREEDY) for p in prompts[:2]), return_exceptions=True)
        for outcome in outcomes:
            assert isinstance(outcome, EngineError) and "RuntimeError: simulated device fault" in str(outcome)
        with pytest.raises(EngineError, match="simulated device fault"):
            await engine.generate(prompts[0], GREEDY)
    finally:
        hook.remove()


async def test_a_weight_update_between_steps_bumps_the_version_of_new_sequences(engine, prompts, greedy):
    running = asyncio.create_task(engine.generate(prompts[0], GREEDY))
    await until(lambda: engine.stats().running == 1)
    await asyncio.to_thread(engine.update_weights, None, 1)
    later = await engine.generate(prompts[1], Sampling(max_new_tokens=4, temperature=0))
    assert ((await running).policy_version, later.policy_version) == (0, 1)
    assert list((await running).token_ids) == greedy[0]
