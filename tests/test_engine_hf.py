"""The in-process engine on the real small model: continuous batching, sampling, admission, failures, prefix caching."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
import torch

from ptrain.engine.admission import kv_peak, prefill_groups
from ptrain.engine.base import Engine, Sampling
from ptrain.engine.hf import HFEngine
from ptrain.engine.prefix_cache import PrefixCache, PrefixEntry, common_prefix
from ptrain.engine.sampling import draw, top_p_filter
from ptrain.engine.slots import COLUMN_BLOCK, ROW_BLOCK, SlotKV
from ptrain.errors import ConfigError, EngineError

GREEDY = Sampling(max_new_tokens=16, temperature=0)
QUESTIONS = [
    "What is 2+2?",
    "Hi",
    "Explain how a compiler turns source code into machine code, step by step, with an example in C.",
    "How do I reverse a list in Python?",
]
SYSTEM = (
    "You are a coding agent in a Linux sandbox. Run shell commands with the bash tool, read files before you "
    "change them, and keep every change as small as the task allows. When the tests pass, say DONE on a line of "
    "its own. Never delete files you did not create, never use the network, and explain each command in one "
    "short sentence before you run it. If a command fails, read its error output and try a different approach."
)


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


@pytest.fixture(scope="module")
def tokenizer(model_path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_path)


def chat(tokenizer, question: str, system: str = SYSTEM) -> list[int]:
    messages = [{"role": "system", "content": system}, {"role": "user", "content": question}]
    return tokenizer.apply_chat_template(messages, add_generation_prompt=True)["input_ids"]


def reference(model, prompt: list[int], max_new_tokens: int) -> list[int]:
    """Greedy `model.generate` with no cache shared between calls."""
    with torch.inference_mode():
        mask = torch.ones(1, len(prompt), dtype=torch.long)
        out = model.generate(
            torch.tensor([prompt]),
            attention_mask=mask,
            do_sample=False,
            max_new_tokens=max_new_tokens,
            eos_token_id=None,
        )
        return out[0, len(prompt) :].tolist()


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


async def test_the_counters_say_what_each_decode_steps_attention_covered_and_how_much_was_padding(engine, prompts):
    a, b, n = prompts[0], prompts[1], 5
    before = engine.stats().extra
    await asyncio.gather(*(engine.generate(p, Sampling(max_new_tokens=n, temperature=0)) for p in (a, b)))
    after = engine.stats().extra
    cells, context = (after[k] - before[k] for k in ("decode_cells", "decode_context_tokens"))
    # both prefill together (their first tokens), then n - 1 steps of two rows over the longer one's width
    steps = range(n - 1)
    assert after["decode_steps"] - before["decode_steps"] == n - 1
    assert cells == sum(2 * (max(len(a), len(b)) + k + 1) for k in steps)
    assert context == sum(len(a) + len(b) + 2 * (k + 1) for k in steps)


async def test_rows_leaving_mid_batch_hand_their_slots_to_others_and_every_row_stays_exact(engine, model, prompts):
    lengths = [3, 16, 7, 12, 1, 9]  # rows finish at different steps, so later rows move into the freed slots
    cases = [(prompts[i % len(prompts)], n) for i, n in enumerate(lengths)]
    first = [asyncio.create_task(engine.generate(p, Sampling(max_new_tokens=n, temperature=0))) for p, n in cases[:4]]
    await until(lambda: engine.stats().generated_tokens >= 12)  # the 3-token row has left, others run on
    rest = [asyncio.create_task(engine.generate(p, Sampling(max_new_tokens=n, temperature=0))) for p, n in cases[4:]]
    done = await asyncio.gather(*first, *rest)
    assert [list(c.token_ids) for c in done] == [reference(model, p, n) for p, n in cases]
    assert engine.stats().extra["kv_held_tokens"] == 0  # an idle engine keeps no buffers


async def test_prompts_arriving_mid_batch_prefill_in_the_rows_decode_pass_and_stay_exact(model, tokenizer):
    engine = HFEngine(model, seed=0)
    try:
        long = chat(tokenizer, "Explain how a compiler turns source code into machine code, step by step.")
        running = asyncio.create_task(engine.generate(long, Sampling(max_new_tokens=48, temperature=0)))
        await until(lambda: engine.stats().generated_tokens >= 3)
        arrivals = [chat(tokenizer, q) for q in ("What is 2+2?", "How do I reverse a list in Python?")]
        done = [await engine.generate(p, Sampling(max_new_tokens=6, temperature=0)) for p in arrivals]  # one by one
        assert not running.done(), "each arrival should have joined while the long row ran"
        done.append(await running)
        stats = engine.stats().extra
    finally:
        await engine.close()
    assert stats["packed_steps"] >= 2 and stats["prefix_hit_tokens"] > 0  # they reused the shared system prompt
    for prompt, completion in zip([*arrivals, long], done, strict=True):
        assert list(completion.token_ids) == reference(model, prompt, len(completion.token_ids))
        expected = full_forward_logprobs(model, prompt, completion.token_ids, 1.0)
        assert torch.allclose(torch.tensor(completion.logprobs), expected, atol=1e-4)


def test_slots_keep_rows_by_moving_the_last_ones_into_the_holes_and_grow_without_losing_any():
    slots = SlotKV(layers=2, heads=1, head_dim=2, dtype=torch.float32, device=torch.device("cpu"))

    def kv(value: float, length: int) -> list:  # a right-aligned prefill row: padding, then `length` tokens
        keys = torch.cat([torch.zeros(1, 1, 2, 2), torch.full((1, 1, length, 2), value)], dim=2)
        return [(keys, keys + 100)] * 2

    for value, length in ((1.0, 3), (2.0, 5), (3.0, 2), (4.0, 2 * COLUMN_BLOCK)):  # the last one grows the columns
        slots.add(kv(value, length), 0, length)
    assert slots.capacity == (ROW_BLOCK, 3 * COLUMN_BLOCK) and slots.width == 2 * COLUMN_BLOCK + 1
    assert slots.keep([0, 2, 3]) == [0, 3, 2]  # row 1 leaves; the last row takes its slot
    assert slots.lengths.tolist() == [3, 2 * COLUMN_BLOCK, 2]
    for row, (value, length) in enumerate(((1.0, 3), (4.0, 2 * COLUMN_BLOCK), (3.0, 2))):
        keys, values = slots.row(row, length)[1]
        assert keys.eq(value).all() and values.eq(value + 100).all() and keys.shape == (1, 1, length, 2)
    assert slots.mask().tolist()[2][:4] == [1, 1, 1, 0]  # row 2 sees its 2 tokens and the new one
    slots.keep([0, 2])  # the long row leaves: the columns shrink to fit the rest
    assert slots.capacity == (ROW_BLOCK, COLUMN_BLOCK) and slots.row(1, 2)[0][0].eq(3.0).all()
    slots.keep([])
    assert slots.rows == 0 and slots.tokens_held() == 0


async def test_logprobs_are_those_of_a_full_forward_pass_at_the_sampling_temperature(engine, model, prompts):
    cases = [
        (prompts[0], Sampling(max_new_tokens=12, temperature=1.0)),
        (prompts[2], Sampling(max_new_tokens=12, temperature=0.7)),
    ]
    done = await asyncio.gather(*(engine.generate(p, s) for p, s in cases))
    for (prompt, sampling), completion in zip(cases, done, strict=True):
        expected = full_forward_logprobs(model, prompt, completion.token_ids, sampling.temperature)
        assert torch.allclose(torch.tensor(completion.logprobs), expected, atol=1e-4)


async def test_a_bfloat16_engine_samples_the_bfloat16_models_tokens_and_an_unknown_dtype_is_refused(
    model_path, prompts, greedy
):
    engine = HFEngine.load(model_path, dtype="bfloat16")
    try:
        assert next(engine.module.parameters()).dtype == torch.bfloat16
        done = await engine.generate(prompts[0], GREEDY)
        assert len(done.token_ids) == len(done.logprobs) > 0 and all(lp <= 0 for lp in done.logprobs)
        assert list(done.token_ids[:3]) == greedy[0][:3]  # the same first words as in float32
    finally:
        await engine.close()
    with pytest.raises(ConfigError, match="unknown dtype 'int4'"):
        HFEngine.load(model_path, dtype="int4")


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
    assert engine.stats().extra["prefix_entries"] == 3  # the cancelled row's KV is kept too


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


async def test_a_failing_packed_pass_fails_the_running_rows_and_the_joining_prompt(engine, model, prompts):
    def fault(module, args, kwargs):
        if "ptrain_plan" in kwargs:  # only the pass that packs a prefill with the rows' decode
            raise RuntimeError("simulated fault in a packed pass")

    running = asyncio.create_task(engine.generate(prompts[2], Sampling(max_new_tokens=64, temperature=0)))
    await until(lambda: engine.stats().generated_tokens >= 3)
    hook = model.register_forward_pre_hook(fault, with_kwargs=True)
    try:
        outcomes = await asyncio.gather(running, engine.generate(prompts[0], GREEDY), return_exceptions=True)
    finally:
        hook.remove()
    for outcome in outcomes:
        assert isinstance(outcome, EngineError) and "simulated fault in a packed pass" in str(outcome)


async def test_a_weight_update_between_steps_bumps_the_version_of_new_sequences(engine, prompts, greedy):
    running = asyncio.create_task(engine.generate(prompts[0], GREEDY))
    await until(lambda: engine.stats().running == 1)
    await asyncio.to_thread(engine.update_weights, None, 1)
    later = await engine.generate(prompts[1], Sampling(max_new_tokens=4, temperature=0))
    assert ((await running).policy_version, later.policy_version) == (0, 1)
    assert list((await running).token_ids) == greedy[0]
    assert engine.stats().extra["prefix_entries"] == 1  # not the one the old weights started


def test_the_prefix_cache_drops_what_a_newer_entry_extends_and_evicts_the_least_recently_used():
    def entry(ids: list[int]) -> PrefixEntry:
        return PrefixEntry(ids, [(torch.zeros(1, 1, len(ids), 2), torch.zeros(1, 1, len(ids), 2))], epoch=0)

    cache = PrefixCache(max_entries=3)
    turn1, turn2, other = entry(list(range(20))), entry(list(range(30))), entry([*range(10), 99, 98])
    for e in (turn1, other, turn2):
        cache.store(e, limit=1000)
    assert cache.entries == [other, turn2] and cache.tokens == 42  # turn 2 extends turn 1
    cache.store(entry(list(range(25))), limit=1000)  # turn 2 holds it all already
    assert cache.entries == [other, turn2]
    assert cache.match([*range(10), 99, 5]) == (other, 11) and cache.match([7, 7]) == (None, 0)
    assert not cache.make_room(10, keep=[turn2])  # what must stay is over the limit: nothing goes
    assert cache.make_room(30, keep=[turn2]) and cache.entries == [turn2]
    cache.store(entry([5] * 40), limit=50)  # does not fit beside turn 2: the older one goes
    assert [len(e.ids) for e in cache.entries] == [40]
    cache.store(entry([6] * 60), limit=50)  # could never fit: skipped
    assert [len(e.ids) for e in cache.entries] == [40]


def test_the_helpers_find_common_prefixes_and_group_similar_prefills():
    assert [common_prefix([1, 2, 3], b) for b in ([1, 2, 3, 4], [1, 2, 4], [2], [])] == [3, 2, 0, 0]
    assert common_prefix(list(range(1000)), [*range(777), 0]) == 777
    assert prefill_groups([10, 600, 15, 700, 400]) == [[3, 1, 4], [2, 0]]  # longest first, within 2x
    assert torch.equal(top_p_filter(torch.tensor([0.5, 0.3, 0.2]), 0.7), torch.tensor([0.5, 0.3, 0.0]))


def test_draw_samples_in_proportion_never_a_zero_and_repeats_with_its_seed():
    probs = torch.tensor([0.1, 0.0, 0.6, 0.3, 0.0])
    generator = torch.Generator().manual_seed(7)
    counts = torch.bincount(torch.stack([draw(probs, generator) for _ in range(20_000)]), minlength=5)
    assert counts[1] == counts[4] == 0
    assert torch.allclose(counts / 20_000, probs, atol=0.015)  # over 4 sigma at p = 0.6 (and the seed is fixed)
    first, again = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    assert [int(draw(probs, first)) for _ in range(50)] == [int(draw(probs, again)) for _ in range(50)]
    assert draw(torch.tensor([0.0, 0.0, 2.0]), None) == 2  # unnormalized weights work too


async def test_multi_turn_episodes_reuse_their_past_turns_and_match_the_uncached_engine(model, tokenizer):
    async def episode(engine: HFEngine, question: str) -> list:
        ids, done = chat(tokenizer, question), []
        for turn in range(3):
            done.append(await engine.generate(ids, Sampling(max_new_tokens=10, temperature=0)))
            tool = f"<|im_end|>\n<|im_start|>tool\nexit code {turn}: 3 files changed<|im_end|>\n<|im_start|>assistant\n"
            ids = ids + list(done[-1].token_ids) + tokenizer(tool)["input_ids"]
        return done

    results, stats = [], []
    for prefix_cache in (True, False):
        engine = HFEngine(model, prefix_cache=prefix_cache)
        try:
            results.append(await asyncio.gather(*(episode(engine, q) for q in QUESTIONS[2:])))
            stats.append(engine.stats())
        finally:
            await engine.close()
    cached, uncached = results
    for a, b in zip(sum(cached, []), sum(uncached, []), strict=True):
        assert a.token_ids == b.token_ids
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)
    on, off = (s.extra for s in stats)
    assert stats[0].prompt_tokens == stats[1].prompt_tokens == on["prefix_hit_tokens"] + on["prefill_tokens"]
    assert (off["prefix_hit_tokens"], off["prefill_tokens"]) == (0, stats[1].prompt_tokens)
    assert on["prefill_tokens"] < off["prefill_tokens"] / 2
    assert on["prefix_entries"] == 2  # each episode's last turn; the earlier ones are its prefixes


async def test_prompts_sharing_a_system_prompt_reuse_it_one_after_another_and_when_admitted_together(
    engine, model, tokenizer
):
    prompts = [chat(tokenizer, q) for q in QUESTIONS]
    shared = common_prefix(prompts[0], prompts[1])
    assert shared > 100  # the system prompt
    await engine.generate(prompts[0], Sampling(max_new_tokens=4, temperature=0))
    second = await engine.generate(prompts[1], Sampling(max_new_tokens=4, temperature=0))
    assert engine.stats().extra["prefix_hit_tokens"] == shared
    assert list(second.token_ids) == reference(model, prompts[1], 4)

    with engine.paused():  # holds them back so that they are admitted in one step (and clears the cache)
        tasks = [
            asyncio.create_task(engine.generate(p, Sampling(max_new_tokens=4, temperature=0))) for p in prompts[2:]
        ]
        await until(lambda: engine.stats().waiting == 2)
    together = await asyncio.gather(*tasks)
    assert engine.stats().extra["prefix_hit_tokens"] == shared + common_prefix(prompts[2], prompts[3])
    assert [list(c.token_ids) for c in together] == [reference(model, p, 4) for p in prompts[2:]]


async def test_a_prompt_is_reusable_as_soon_as_it_is_prefilled_while_its_row_still_runs(engine, model, tokenizer):
    prompts = [chat(tokenizer, q) for q in QUESTIONS[:2]]
    first = asyncio.create_task(engine.generate(prompts[0], Sampling(max_new_tokens=24, temperature=0)))
    await until(lambda: engine.stats().generated_tokens >= 2)  # running, far from done
    second = await engine.generate(prompts[1], Sampling(max_new_tokens=4, temperature=0))
    assert not first.done() and engine.stats().extra["prefix_hit_tokens"] == common_prefix(*prompts)
    assert list(second.token_ids) == reference(model, prompts[1], 4)
    assert list((await first).token_ids) == reference(model, prompts[0], 24)


async def test_a_weight_update_clears_the_prefix_cache_so_new_weights_compute_every_token(model, tokenizer):
    weight = model.model.layers[3].mlp.down_proj.weight
    original = weight.detach().clone()
    engine = HFEngine(model)
    try:
        prompt = chat(tokenizer, QUESTIONS[0])
        first = await engine.generate(prompt, Sampling(max_new_tokens=6, temperature=0))
        assert engine.stats().extra["prefix_entries"] == 1
        await asyncio.to_thread(engine.update_weights, lambda m: weight.mul_(3.0), 1)
        assert (engine.stats().extra["prefix_entries"], engine.stats().extra["prefix_cached_tokens"]) == (0, 0)
        follow_up = prompt + list(first.token_ids) + tokenizer("<|im_end|>\n<|im_start|>user\nWhy?")["input_ids"]
        after = await engine.generate(follow_up, Sampling(max_new_tokens=6, temperature=0))
        assert engine.stats().extra["prefix_hit_tokens"] == 0
        assert list(after.token_ids) == reference(model, follow_up, 6)
        expected = full_forward_logprobs(model, follow_up, after.token_ids, temperature=1.0)
        assert torch.allclose(torch.tensor(after.logprobs), expected, atol=1e-4)
    finally:
        await engine.close()
        with torch.no_grad():
            weight.copy_(original)


async def test_a_tight_kv_budget_evicts_prefix_entries_and_requests_still_complete(model, prompts, greedy):
    budget = len(prompts[2]) + len(prompts[3]) + 2 * 8
    engine = HFEngine(model, kv_budget_tokens=budget)
    try:
        held = []
        for prompt in [*prompts, prompts[0]]:
            done = await engine.generate(prompt, Sampling(max_new_tokens=8, temperature=0))
            assert list(done.token_ids) == greedy[prompts.index(prompt)][:8]
            held.append(engine.stats().extra["prefix_cached_tokens"])
        assert max(held) <= budget and engine.stats().extra["prefix_entries"] < 4
    finally:
        await engine.close()
