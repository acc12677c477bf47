"""The behaviour-policy contract: the trainer scores each token under the distribution it was sampled from.

Real episodes from the real hf engine (SmolLM2, terminal-coding in podman sandboxes) at T = 0.7, with
and without top-p, scored by the trainer before any update; the metrics that show a mismatch; the
decoupled objective, segment counting, the KL reference under --init and truncated-episode masking.
"""

from __future__ import annotations

import dataclasses
import json
import logging

import numpy as np
import pytest
import torch
from test_train import fill_store, small

from ptrain.engine.base import Sampling
from ptrain.engine.sampling import processed_logprobs, sample, top_p_filter
from ptrain.episode import Episode, Group, StoredVerdict
from ptrain.online.rounds import refill_tasks
from ptrain.train.batch import collate, segments_of, select_grpo
from ptrain.train.config import TrainConfig
from ptrain.train.grpo import LossConfig, aggregate, mismatch, per_token_loss
from ptrain.train.loop import Trainer

TASKS = ("text/count-lines", "files-shell/create-hello")


# -- the distribution sampled -------------------------------------------------------------------


def test_processed_logprobs_renormalise_the_nucleus_and_keep_the_drawn_token():
    logits = torch.tensor([[2.0, 1.0, 0.5, -1.0], [0.0, 0.0, 0.0, 0.0]])
    out = processed_logprobs(logits, torch.tensor([0.7, 1.0]), torch.tensor([0.8, 1.0]))
    probs = top_p_filter(torch.softmax(logits[0] / 0.7, -1), 0.8)
    assert torch.allclose(out[0].exp(), probs / probs.sum())  # the nucleus, renormalised
    assert torch.isinf(out[0, 2:]).all() and torch.allclose(out[1], torch.full((4,), -np.log(4.0)))
    kept = processed_logprobs(logits, torch.tensor([0.7, 1.0]), torch.tensor([0.8, 1.0]), keep=torch.tensor([3, 0]))
    assert torch.isfinite(kept[0, 3]) and kept[0].exp().sum() == pytest.approx(1.0)


def test_the_engines_logprob_is_that_of_the_distribution_it_drew_from():
    logits = torch.randn(3, 50, generator=torch.Generator().manual_seed(0)) * 3
    samplings = [Sampling(temperature=0.7, top_p=0.9), Sampling(temperature=1.3), Sampling(temperature=0.0)]
    gens = [torch.Generator().manual_seed(i) for i in range(3)]
    tokens, logprobs = sample(logits, samplings, gens)
    expected = processed_logprobs(logits, torch.tensor([0.7, 1.3, 1.0]), torch.tensor([0.9, 1.0, 1.0]))
    assert torch.allclose(logprobs, expected.gather(1, tokens[:, None])[:, 0])
    assert tokens[2] == logits[2].argmax()  # greedy, scored untransformed


async def test_the_trainer_scores_the_hf_engines_samples_at_t07_without_top_p(model_path, tokenizer, tmp_path):
    from ptrain.engine.hf import HFEngine
    from ptrain.train.batch import Sequence
    from ptrain.train.model import masked_logprobs

    trainer = Trainer(small(model=str(model_path)), tmp_path / "run")
    trainer.model.eval()
    engine = HFEngine(trainer.model, max_batch=4, seed=0)
    asks = ["List the files in /tmp.", "Write a function that reverses a string.", "Name three colours."]
    prompts = [tokenizer.encode(tokenizer.apply_chat_template([{"role": "user", "content": q}], tokenize=False,
                                                              add_generation_prompt=True)) for q in asks]  # fmt: skip
    try:
        done = [await engine.generate(p, Sampling(max_new_tokens=32, temperature=0.7, seed=i))
                for i, p in enumerate(prompts)]  # fmt: skip
    finally:
        await engine.close()
    seqs = [Sequence(np.array(p + list(c.token_ids)), np.array([0] * len(p) + [1] * len(c.token_ids), bool),
                     np.array([0.0] * len(p) + list(c.logprobs), np.float32), 1.0, "g", f"e{i}", 0.7)
            for i, (p, c) in enumerate(zip(prompts, done, strict=True))]  # fmt: skip
    t = collate(seqs, trainer.pad_id)
    assert t.top_p is None  # no row under top-p: the plain tempered path
    with torch.no_grad():
        m = mismatch(masked_logprobs(trainer.model, t.input_ids, t.attention_mask, t.mask, 0, t.temperature),
                     t.logprobs, t.mask)  # fmt: skip
    tokens = t.mask.bool()
    assert float(m["abs_log_ratio"][tokens].mean()) < 1e-3 and float(m["abs_log_ratio"][tokens].max()) < 2e-2


# -- real episodes from the real engine ---------------------------------------------------------


async def roll_real(run, model_path, temperature: float, top_p: float, base_url: str = ""):
    """Two tasks x two samples from the hf engine on the trainer's own (float32) weights, or from `ptrain serve`
    at `base_url` through the openai engine; the trainer (a fresh LoRA adapter: the base model) and the episodes."""
    from ptrain.engine.hf import HFEngine
    from ptrain.engine.openai import OpenAIEngine
    from ptrain.rollout.chat import ChatFormat
    from ptrain.rollout.config import RolloutConfig
    from ptrain.rollout.scheduler import Rollout
    from ptrain.sandbox import PoolSet
    from ptrain.store import Store
    from ptrain.taskpack import load

    pack = load("terminal-coding")
    trainer = Trainer(TrainConfig(model=str(model_path), lora_rank=4, tensorboard=True, groups_per_step=2), run)
    trainer.start(1)
    trainer.model.eval()
    if base_url:
        engine = OpenAIEngine(base_url)
    else:
        engine = HFEngine(trainer.model, max_batch=4, kv_budget_tokens=16384, seed=0)
    cfg = RolloutConfig(task_ids=TASKS, samples=2, concurrency=4, max_turns=2, max_new_tokens=48, verify=False,
                        temperature=temperature, top_p=top_p, flush_interval_s=0.5, action_format="bash",
                        engine="openai" if base_url else "hf", base_url=base_url)  # fmt: skip
    store = Store(run, create=True)
    try:
        async with PoolSet(size=2, max_active=4) as pools:
            await Rollout(cfg, store, pack, engine, ChatFormat(trainer.tokenizer, "bash"), pools).run()
    finally:
        await engine.close()
    episodes = [e for e in store.episodes() if e.model_tokens > 0]
    assert len(episodes) >= 3, [(e.status, e.error_message) for e in store.episodes()]
    return trainer, episodes


def scored(trainer, episodes) -> tuple[dict, dict, torch.Tensor]:
    """The trainer's mismatch to the stored logprobs, under the episodes' transform and untransformed (T = 1)."""
    from ptrain.train.model import masked_logprobs

    t = collate([s for g in groups_of(episodes) for s in g], trainer.pad_id)
    with torch.no_grad():
        lp = masked_logprobs(trainer.model, t.input_ids, t.attention_mask, t.mask, 0, t.temperature, t.top_p)
        untransformed = masked_logprobs(trainer.model, t.input_ids, t.attention_mask, t.mask)
    return mismatch(lp, t.logprobs, t.mask), mismatch(untransformed, t.logprobs, t.mask), t.mask.bool()


def groups_of(episodes: list[Episode], **override) -> list[list]:
    """Every episode's segments as training sequences, advantage +-1 in turn (the scores are what is checked)."""
    out = []
    for i, e in enumerate(episodes):
        out.append([dataclasses.replace(s, **override) for s in segments_of(e, 1.0 if i % 2 else -1.0)])
    return out


@pytest.mark.slow
@pytest.mark.podman
async def test_the_trainer_scores_real_engine_episodes_as_they_were_sampled(tmp_path, model_path, podman_url, caplog):
    top_p = 0.9
    trainer, episodes = await roll_real(tmp_path / "run", model_path, 0.7, top_p)
    assert {e.metadata["temperature"] for e in episodes} == {0.7} and {e.metadata["top_p"] for e in episodes} == {top_p}
    seqs = [s for g in groups_of(episodes) for s in g]
    assert {(s.temperature, s.top_p) for s in seqs} == {(0.7, top_p)}

    # before any update: the trainer's logprobs of what the engine sampled, under the episodes' own transform
    m, wrong, tokens = scored(trainer, episodes)
    assert float(m["abs_log_ratio"][tokens].mean()) < 1e-3 and float(m["abs_log_ratio"][tokens].max()) < 2e-2
    assert float(wrong["abs_log_ratio"][tokens].mean()) > 0.05  # the old bug: logits not divided by the temperature

    # the step's metrics say the same, in train.jsonl and TensorBoard; no contract warning
    with caplog.at_level(logging.WARNING, logger="ptrain.train"):
        row = trainer.step(groups_of(episodes))
    assert row["mismatch"] < 1e-3 and row["mismatch_max"] < 2e-2 and 0 <= row["mismatch_k3"] < 1e-4
    assert row["on_policy_tokens"] == row["model_tokens"] and row["entropy"] > 0
    assert "CONTRACT BUG" not in caplog.text
    logged = json.loads((tmp_path / "run" / "metrics" / "train.jsonl").read_text().splitlines()[-1])
    metrics = {"mismatch", "mismatch_max", "mismatch_k3", "log_ratio_mean", "entropy", "clipped", "capped"}
    assert metrics <= logged.keys()
    assert any(p.name.startswith("events") for p in (tmp_path / "run" / "tensorboard" / "train").iterdir())

    # the same episodes, scored as if sampled at T = 1 (a contract bug): the metrics show it and the log says so
    trainer.step_no -= 1  # their policy version is the trainer's again: on-policy tokens that disagree
    with caplog.at_level(logging.WARNING, logger="ptrain.train"):
        bad = trainer.step(groups_of(episodes, temperature=1.0, top_p=1.0))
    assert bad["mismatch"] > 0.05 and "CONTRACT BUG" in caplog.text


@pytest.mark.slow
@pytest.mark.podman
async def test_episodes_from_ptrain_serve_through_the_openai_engine_score_the_same_in_the_trainer(
    tmp_path, model_path, podman_url
):
    from test_engine_openai import start_server, stop_server

    server = start_server(tmp_path / "serve.log", "--dtype", "float32", "--max-batch", "4")
    try:
        trainer, episodes = await roll_real(tmp_path / "run", model_path, 0.7, 0.9, base_url=server.url)
    finally:
        stop_server(server.process)
    assert {e.metadata["engine"] for e in episodes} == {"openai"}
    m, wrong, tokens = scored(trainer, episodes)
    assert float(m["abs_log_ratio"][tokens].mean()) < 1e-3 and float(m["abs_log_ratio"][tokens].max()) < 2e-2
    assert float(wrong["abs_log_ratio"][tokens].mean()) > 0.05


# -- the loss's bookkeeping -------------------------------------------------------------------


def test_decoupled_mode_clips_against_the_proximal_policy_and_weights_by_the_behaviour_ratio():
    lp = torch.tensor([[-1.0, -1.0, -1.0]], requires_grad=True)
    behaviour = torch.tensor([[-1.0, -2.0, -0.5]])
    adv, mask = torch.tensor([1.0]), torch.ones(1, 3)
    same, _ = per_token_loss(lp, behaviour, adv, mask, LossConfig(old_policy="trainer"))
    decoupled, stats = per_token_loss(lp, behaviour, adv, mask, LossConfig(old_policy="decoupled"), None, lp.detach())
    assert torch.allclose(same, decoupled)  # proximal = current: the "trainer" mode
    proximal = torch.tensor([[-1.5, -1.0, -1.0]])  # the policy moved up on token 0 since the step began
    loss, stats = per_token_loss(
        lp, behaviour, adv, mask, LossConfig(old_policy="decoupled", is_cap=2.0), None, proximal
    )
    ratio = torch.exp(lp.detach() - proximal)
    weight = torch.clamp(torch.exp(proximal - behaviour), max=2.0)
    expected = -torch.minimum(ratio, torch.clamp(ratio, 0.8, 1.28)) * weight
    assert torch.allclose(loss, expected) and stats["clipped"][0, 0] == 1 and stats["capped"][0, 1] == 1
    with pytest.raises(ValueError, match="proximal"):
        per_token_loss(lp, behaviour, adv, mask, LossConfig(old_policy="decoupled"))


def test_an_episode_counts_once_in_sequence_and_constant_aggregation_however_many_segments():
    # episode A: two segments of 2 and 4 model tokens; episode B: one of 3. Per-token losses: 1 on A, 4 on B.
    loss = torch.tensor([[1.0, 1.0, 0, 0], [1.0, 1.0, 1.0, 1.0], [4.0, 4.0, 4.0, 0]])
    mask = (loss > 0).float()
    episode_tokens = torch.tensor([6.0, 6.0, 3.0])
    seq = LossConfig(aggregation="sequence")
    assert float(aggregate(loss, mask, seq, 9, 2, episode_tokens)) == pytest.approx((1 + 4) / 2)
    assert float(aggregate(loss, mask, seq, 9, 3)) == pytest.approx((1 + 1 + 4) / 3)  # rows as episodes: A twice
    const = LossConfig(aggregation="constant", max_tokens=10)
    assert float(aggregate(loss, mask, const, 9, 2, episode_tokens)) == pytest.approx(float(loss.sum()) / 20)


def episode(i: int, status: str = "ok", segments=None, **metadata) -> Episode:
    ids = np.arange(40, dtype=np.int32) + 10
    mask = np.zeros(40, bool)
    mask[[12, 13, 30, 31, 32]] = True
    return Episode(run="r", taskpack="tp", task_id="t", split="train", group_id="t@0", sample_index=i, group_size=3,
                   token_ids=ids, loss_mask=mask, logprobs=np.where(mask, -1.0, 0.0).astype(np.float32), status=status,
                   metadata={**({"segments": segments} if segments else {}), **metadata})  # fmt: skip


def test_segments_carry_their_episodes_transform_and_size_and_truncated_episodes_can_be_masked():
    episodes = (episode(0, segments=[0, 20], temperature=0.7, top_p=0.9), episode(1), episode(2, "truncated"))
    verdicts = tuple(StoredVerdict(episode_id=e.episode_id, reward=r, passed=r == 1) for e, r in
                     zip(episodes, [1.0, 0.0, 0.5], strict=True))  # fmt: skip
    group = Group("t@0", episodes, verdicts)
    a, b = segments_of(episodes[0], 1.0)
    assert (a.temperature, a.top_p, a.episode_tokens) == (b.temperature, b.top_p, b.episode_tokens) == (0.7, 0.9, 5)
    greedy = segments_of(episode(0, temperature=0.0, top_p=0.5), 1.0)[0]
    assert (greedy.temperature, greedy.top_p) == (1.0, 1.0)  # greedy logprobs are of the untransformed logits
    plain = select_grpo([group], "drgrpo")
    masked = select_grpo([group], "drgrpo", mask_truncated=True)
    assert [s.advantage for s in plain.groups[0]] == pytest.approx([0.5, 0.5, -0.5, 0.0])
    assert [s.advantage for s in masked.groups[0]] == pytest.approx([0.5, 0.5, -0.5])  # same advantages, no episode 2
    assert masked.dropped == {"truncated episodes masked out of the loss": 1}


def test_dynamic_sampling_refills_are_fresh_tasks_drawn_the_same_way_every_time():
    order = [f"task-{i}" for i in range(10)]
    first = refill_tasks(3, 2, 0, order, ("task-0", "task-1"), seed=7)
    assert first == refill_tasks(3, 2, 0, order, ("task-0", "task-1"), seed=7) and len(set(first)) == 3
    assert not set(first) & {"task-0", "task-1"}
    assert refill_tasks(3, 2, 1, order, ("task-0", "task-1"), seed=7) != first
    assert refill_tasks(5, 0, 0, order[:4], tuple(order[:3]), seed=0) == ("task-3",)


# -- the KL reference -------------------------------------------------------------------------


def test_the_kl_reference_under_init_is_the_warm_start_not_the_base_model(model_path, tokenizer, tmp_path):
    store = fill_store(tmp_path / "sft", tokenizer, tasks=2, samples=2, rewards=lambda t, s: 1.0)
    Trainer(small(algo="sft", model=str(model_path), lr=5e-2, max_steps=1), tmp_path / "sft").train(store)
    warm = tmp_path / "sft"  # a run: --init takes its latest checkpoint

    grpo = fill_store(tmp_path / "grpo", tokenizer, tasks=2, samples=2)
    trainer = Trainer(small(model=str(model_path), init=str(warm), kl_beta=0.1, lr=5e-2, epochs=2),
                      tmp_path / "grpo")  # fmt: skip
    first, second = trainer.train(grpo)
    assert first["kl"] < 1e-6  # the policy is the warm start, so KL to the reference is zero
    assert second["kl"] > 1e-6  # one step later it moved away from it, and the reference stayed put
    base = Trainer(small(model=str(model_path), kl_beta=0.1, lr=5e-2, max_steps=1), tmp_path / "base")
    assert base.reference is None  # without --init the reference is the adapter switched off


def test_episodes_sampled_by_a_stale_policy_do_not_raise_the_contract_warning(model_path, tokenizer, tmp_path, caplog):
    store = fill_store(tmp_path / "run", tokenizer, tasks=2, samples=2)  # made-up behaviour logprobs, version 0
    trainer = Trainer(small(model=str(model_path), max_steps=1), tmp_path / "run")
    trainer.base_version = 3  # the trainer is three versions ahead: a mismatch is staleness, not a bug
    with caplog.at_level(logging.WARNING, logger="ptrain.train"):
        (row,) = trainer.train(store)
    assert row["mismatch"] > 0.1 and row["on_policy_tokens"] == 0 and row["on_policy_mismatch"] is None
    assert "CONTRACT BUG" not in caplog.text
