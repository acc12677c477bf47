"""`--trainer trl`: TRL's GRPOTrainer fed from a real store (Parquet, the real SmolLM2 tokenizer and model)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from ptrain.episode import Episode, StoredVerdict
from ptrain.errors import ConfigError
from ptrain.store import Store
from ptrain.train import trl_backend
from ptrain.train.batch import collate, select_grpo
from ptrain.train.config import TrainConfig
from ptrain.train.grpo import aggregate, per_token_loss
from ptrain.train.model import masked_logprobs

REWARDS = {0: [1.0, 0.0], 1: [0.2, 0.9], 2: [0.0, 1.0], 3: [0.4, 0.4]}  # group 3 is flat
WORDS = ["ls", "cat", "grep", "sed", "test", "fix", "file", "line", "error", "pass", "fail", "run", "make", "src"]


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """One torch thread: on a small shared CPU, two threads that wait on each other are several times slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def base(model_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32).eval()
    return model, AutoTokenizer.from_pretrained(model_path)


def multi_turn(tokenizer, task: int, sample: int) -> tuple[np.ndarray, np.ndarray]:
    """Prompt, model turn, tool output, model turn: about 30 tokens, the mask on the model's turns."""
    rng = np.random.default_rng(task * 100 + sample)
    say = lambda n: " ".join(rng.choice(WORDS, n))  # noqa: E731
    parts = [
        (f"<|im_start|>user\nTask {task}: fix src/main.py<|im_end|>\n<|im_start|>assistant\n", 0),
        (f"{say(3)}<|im_end|>\n", 1),
        (f"<|im_start|>tool\n{say(3)}<|im_end|>\n<|im_start|>assistant\n", 0),
        (f"{say(rng.integers(2, 5))}<|im_end|>", 1),
    ]
    ids = [tokenizer.encode(text, add_special_tokens=False) for text, _ in parts]
    mask = np.concatenate([np.full(len(i), m, bool) for i, (_, m) in zip(ids, parts, strict=True)])
    return np.concatenate(ids), mask


def make_store(path: Path, base, segments: bool = False, temperature: float = 1.0) -> Store:
    """Four groups of two (one flat); the behaviour logprobs are the model's own plus noise, so clip and cap both bite.

    With `segments`, every episode was compacted into two segments (and its logprobs are left at zero). With a
    `temperature`, the episodes say they were sampled at it and their logprobs are the model's at it.
    """
    model, tokenizer = base
    store = Store(path, create=True)
    gen = torch.Generator().manual_seed(0)
    with store.writer() as writer:
        for task, rewards in REWARDS.items():
            for sample, reward in enumerate(rewards):
                ids, mask = multi_turn(tokenizer, task, sample)
                t = lambda a: torch.as_tensor(a).unsqueeze(0).long()  # noqa: E731
                lp = torch.zeros(len(ids))
                if not segments:
                    with torch.no_grad():
                        lp = masked_logprobs(model, t(ids), torch.ones_like(t(ids)), t(mask), 0,
                                             torch.tensor([temperature]))[0]  # fmt: skip
                    lp = torch.where(t(mask)[0].bool(), lp + 0.3 * torch.randn(lp.shape, generator=gen), 0.0)
                episode = Episode(run="run-1", taskpack="terminal-coding", task_id=f"task-{task}", split="train",
                                  group_id=f"task-{task}@0", sample_index=sample, group_size=len(rewards),
                                  token_ids=ids, loss_mask=mask, logprobs=lp.numpy(),
                                  metadata={"temperature": temperature, **({"segments": [0, 20]} if segments else {})})  # fmt: skip
                writer.add(episode)
                writer.add_verdict(StoredVerdict(episode_id=episode.episode_id, reward=reward, passed=reward == 1.0))
    return store


@pytest.fixture(scope="module")
def store(tmp_path_factory, base) -> Store:
    return make_store(tmp_path_factory.mktemp("trl") / "run", base)


def rewards_of(group_id: str) -> list[float]:
    return REWARDS[int(group_id.removeprefix("task-").split("@")[0])]


def config(**overrides) -> TrainConfig:
    # a step is one group of two, in two micro-batches of one sequence: TRL's "dapo" must still take the step's token mean
    settings = dict(trainer="trl", groups_per_step=1, max_steps=2, lr=1e-3, lora_rank=8, micro_batch_tokens=40,
                    is_cap=1.5, save_every=10, tensorboard=False, device="cpu")  # fmt: skip
    return TrainConfig(**{**settings, **overrides})


@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")  # TRL 1.16 asks
def test_trl_trains_on_the_stored_groups_with_ptrains_loss(store, base):
    from safetensors.torch import load_file

    run, cfg = store.path, config()
    rows = trl_backend.train_with_trl(run, store, cfg)

    assert [r["step"] for r in rows] == [1, 2]
    for row in rows:
        assert {"step", "loss", "reward_mean", "grad_norm", "tokens_per_s", "dropped"} <= row.keys()
        assert np.isfinite(row["loss"]) and row["grad_norm"] > 0 and row["tokens_per_s"] > 0
        assert (row["groups"], row["sequences"], row["dropped"]) == (1, 2, {})
    plan = trl_backend.plan(store, cfg)
    steps, selections = plan.steps, plan.selections
    assert selections["task-3@0"].dropped == {"flat groups (all rewards equal)": 1}  # as ptrain drops it
    assert len(steps) == 2 and steps[0] != steps[1]

    # step 1 is ptrain's loss on the same groups: behaviour logprobs as the old policy, clip, cap, token mean
    model, tokenizer = base
    seqs = [s for g in steps[0] for s in select_grpo([group_of(store, g)], "grpo").groups[0]]
    batch = collate(seqs, tokenizer.pad_token_id)
    with torch.no_grad():
        lp = masked_logprobs(model, batch.input_ids, batch.attention_mask, batch.mask)
    per_token, stats = per_token_loss(lp, batch.logprobs, batch.advantages, batch.mask, cfg.loss)
    expected = aggregate(per_token, batch.mask, cfg.loss, float(batch.mask.sum()), len(seqs))
    assert (stats["ratio"][batch.mask.bool()] == cfg.is_cap).any()  # the cap binds somewhere
    assert rows[0]["loss"] == pytest.approx(float(expected), abs=1e-4)
    assert rows[0]["reward_mean"] == pytest.approx(np.mean(rewards_of(steps[0][0])))

    # the LoRA weights moved (B starts at zero) and the checkpoint is TRL's own adapter
    adapter = load_file(run / "train" / "trl" / "checkpoint-2" / "adapter_model.safetensors")
    lora_b = [w for name, w in adapter.items() if "lora_B" in name]
    assert lora_b and all(w.abs().sum() > 0 for w in lora_b)
    assert (run / "metrics" / "train_trl.jsonl").read_text().count("\n") == 2

    # run again with one step more: TRL resumes from its checkpoint and does only that step, on the third group
    (third,) = trl_backend.train_with_trl(run, store, config(max_steps=3))
    steps3 = trl_backend.plan(store, config(max_steps=3)).steps
    assert steps3[:2] == steps and third["step"] == 3
    assert third["reward_mean"] == pytest.approx(np.mean(rewards_of(steps3[2][0])))


@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
def test_trl_divides_by_the_sampling_temperature_and_its_loss_equals_ptrains_at_t07(tmp_path, base):
    store = make_store(tmp_path / "run", base, temperature=0.7)
    cfg = config(max_steps=1)
    (row,) = trl_backend.train_with_trl(store.path, store, cfg)
    plan = trl_backend.plan(store, cfg)
    assert plan.temperature == 0.7
    model, tokenizer = base
    seqs = [s for g in plan.steps[0] for s in select_grpo([group_of(store, g)], "grpo").groups[0]]
    batch = collate(seqs, tokenizer.pad_token_id)
    with torch.no_grad():
        lp = masked_logprobs(model, batch.input_ids, batch.attention_mask, batch.mask, 0, batch.temperature)
    per_token, _ = per_token_loss(lp, batch.logprobs, batch.advantages, batch.mask, cfg.loss)
    expected = aggregate(per_token, batch.mask, cfg.loss, float(batch.mask.sum()), len(seqs))
    assert row["loss"] == pytest.approx(float(expected), abs=1e-5)


def test_trl_refuses_mixed_temperatures_and_top_p(tmp_path, base):
    samples = [trl_backend.Sample([1], [2], [0.0], [1], 1.0, t, p) for t, p in ((0.7, 1.0), (1.0, 1.0))]
    with pytest.raises(ConfigError, match="one sampling temperature"):
        trl_backend.sampling_temperature(samples)
    with pytest.raises(ConfigError, match="top_p < 1"):
        trl_backend.sampling_temperature([trl_backend.Sample([1], [2], [0.0], [1], 1.0, 0.7, 0.9)])


def group_of(store: Store, group_id: str):
    return next(g for g in store.groups(split="train") if g.group_id == group_id)


def test_trl_takes_whole_steps_and_counts_the_groups_left_over(store):
    plan = trl_backend.plan(store, config(groups_per_step=2, max_steps=0))
    samples, steps = plan.samples, plan.steps
    assert len(steps) == 1 and len(steps[0]) == 2  # three groups with signal: one whole step of two
    assert plan.left_out == {"groups past the last whole step of an epoch (TRL takes whole steps)": 1}
    sample = samples[steps[0][0]][0]
    assert sample.env_mask[0] == 1 and 0 in sample.env_mask  # the completion starts at the model, holds tool output
    assert all(lp == 0.0 for lp, m in zip(sample.logprobs, sample.env_mask, strict=True) if not m)


@pytest.mark.parametrize(
    "overrides, match",
    [
        ({"algo": "sft"}, "GRPOTrainer"),
        ({"old_policy": "trainer"}, "vLLM"),
        ({"init": "some/checkpoint"}, "--init"),
        ({"old_policy": "decoupled"}, "decoupled"),
        ({"mask_truncated": True}, "mask_truncated"),
    ],
    ids=["sft", "trainer-old-policy", "init", "decoupled", "mask-truncated"],
)
def test_settings_trl_cannot_do_are_config_errors(tmp_path, overrides, match):
    store = Store(tmp_path / "run", create=True)
    with pytest.raises(ConfigError, match=match):
        trl_backend.train_with_trl(tmp_path / "run", store, config(**overrides))


def test_compacted_episodes_are_a_config_error(tmp_path, base):
    store = make_store(tmp_path / "run", base, segments=True)
    with pytest.raises(ConfigError, match="compacted episodes"):
        trl_backend.train_with_trl(tmp_path / "run", store, config())


def test_a_trl_outside_the_tested_range_is_named(monkeypatch, tmp_path):
    monkeypatch.setattr(trl_backend, "version", lambda name: "1.17.0")
    with pytest.raises(ConfigError, match=r"trl>=1.16,<1.17; trl 1.17.0 is installed"):
        trl_backend.train_with_trl(tmp_path, Store(tmp_path, create=True), config())
