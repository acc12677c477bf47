"""The training loop on the real model and real stores: batches, learning, checkpoints, resume, export."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from ptrain.episode import Episode, StoredVerdict
from ptrain.errors import PtrainError
from ptrain.store import Store
from ptrain.train.batch import Sequence, cost, deal, micro_batches, segments_of, select_grpo, shared_prefix
from ptrain.train.checkpoint import complete_checkpoints
from ptrain.train.config import TrainConfig
from ptrain.train.grpo import token_logprobs
from ptrain.train.loop import Trainer, select_from_store
from ptrain.train.model import export_merged, load_policy, masked_logprobs

REPLIES = ["The answer is 42.", "I do not know.", "Let me run ls first.", "cat README.md"]


def episode(tokenizer, task: int, sample: int, reply: str, group_size: int, **fields) -> Episode:
    """prompt (user turn) + the reply as the model's tokens + a tool turn + a short second reply."""
    text = tokenizer.apply_chat_template([{"role": "user", "content": f"Task {task}: answer."}],
                                         tokenize=False, add_generation_prompt=True)  # fmt: skip
    prompt = tokenizer.encode(text, add_special_tokens=False)
    first = tokenizer.encode(reply + "<|im_end|>", add_special_tokens=False)
    tool = tokenizer.encode("\n<|im_start|>tool\nok<|im_end|>\n<|im_start|>assistant\n", add_special_tokens=False)
    second = tokenizer.encode("done<|im_end|>", add_special_tokens=False)
    ids = prompt + first + tool + second
    mask = [0] * len(prompt) + [1] * len(first) + [0] * len(tool) + [1] * len(second)
    rng = np.random.default_rng(task * 100 + sample)
    logprobs = np.where(np.array(mask, bool), -rng.uniform(0.5, 3.0, len(ids)), 0.0).astype(np.float32)
    return Episode(run="r", taskpack="tp", task_id=f"t{task}", split="train", group_id=f"t{task}@0",
                   sample_index=sample, group_size=group_size, token_ids=ids, loss_mask=mask, logprobs=logprobs,
                   **fields)  # fmt: skip


def fill_store(path: Path, tokenizer, tasks: int = 4, samples: int = 2, rewards=None) -> Store:
    store = Store(path, create=True)
    with store.writer() as w:
        for task in range(tasks):
            for s in range(samples):
                e = episode(tokenizer, task, s, REPLIES[(task + s) % len(REPLIES)], samples)
                w.add(e)
                reward = rewards(task, s) if rewards else float((task + s) % 2)
                w.add_verdict(StoredVerdict(episode_id=e.episode_id, reward=reward, passed=reward == 1.0))
    return store


def small(**overrides) -> TrainConfig:
    return TrainConfig(**{"groups_per_step": 2, "tensorboard": False, "lora_rank": 4, **overrides})


def adapter_tensors(run: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(complete_checkpoints(run / "train" / "checkpoints")[-1] / "adapter" / "adapter_model.safetensors")


def assert_same_weights(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor], lr: float = 1e-3) -> None:
    """Equal up to float noise: Adam turns last-bit differences in a near-zero gradient into at most a
    tenth of one step on a rare element, while a wrong batch or state moves most elements by a whole step."""
    assert a.keys() == b.keys()
    for key in a:
        diff = (a[key] - b[key]).abs()
        assert diff.max() <= lr / 10 and (diff > 1e-6).float().mean() < 0.01, (key, diff.max())


# -- batches ----------------------------------------------------------------------------------


def seq(n: int, group: str, tokens: int = 1) -> Sequence:
    mask = np.zeros(n, bool)
    mask[-tokens:] = True
    return Sequence(np.arange(n, dtype=np.int32), mask, np.zeros(n, np.float32), 1.0, group, f"{group}-{n}")


def test_groups_are_dealt_whole_and_ranks_get_similar_work():
    groups = [[seq(n, f"g{i}"), seq(n + 1, f"g{i}")] for i, n in enumerate([100, 90, 50, 40, 30, 10])]
    ranks = deal(groups, 2)
    assert sorted(id(g) for r in ranks for g in r) == sorted(id(g) for g in groups)
    loads = [sum(len(s.token_ids) for g in r for s in g) for r in ranks]
    assert abs(loads[0] - loads[1]) <= 2 * 101
    assert deal(groups, 2) == ranks  # deterministic


def test_micro_batches_stay_within_the_token_budget_and_keep_every_sequence():
    seqs = [seq(n, "g") for n in (5, 17, 64, 3, 40, 40, 200)]
    batches = micro_batches(seqs, 128)
    assert sorted(len(s.token_ids) for b in batches for s in b) == sorted(len(s.token_ids) for s in seqs)
    for b in batches:
        assert len(b) == 1 or max(len(s.token_ids) for s in b) * len(b) <= 128


def test_compacted_episode_trains_each_segment_as_its_own_sequence(tokenizer):
    e = episode(tokenizer, 0, 0, REPLIES[0], 2)
    split = e.prompt_tokens + 3
    e = dataclasses.replace(e, metadata={"segments": [0, split]})
    seqs = segments_of(e, 0.5)
    assert [len(s.token_ids) for s in seqs] == [split, e.num_tokens - split]
    assert sum(s.model_tokens for s in seqs) == e.model_tokens


def test_flat_unverified_stale_and_failed_groups_are_left_out_and_counted(tokenizer, tmp_path):
    store = Store(tmp_path / "run", create=True)
    with store.writer() as w:
        for task, (rewards, status, version) in enumerate([
            ((1.0, 0.0), "ok", 5),  # kept
            ((1.0, 1.0), "ok", 5),  # flat
            ((None, 0.0), "ok", 5),  # unverified
            ((1.0, 0.0), "ok", 1),  # stale
            ((1.0, 0.0), "error", 5),  # an infrastructure failure leaves one sample
        ]):  # fmt: skip
            for s, reward in enumerate(rewards):
                extra = {"error_type": "SandboxError"} if status == "error" and s == 0 else {}
                e = episode(tokenizer, task, s, REPLIES[s], 2, policy_version=version,
                            status=status if extra else "ok", **extra)  # fmt: skip
                w.add(e)
                if reward is not None:
                    w.add_verdict(StoredVerdict(episode_id=e.episode_id, reward=reward, passed=reward == 1))
    sel = select_grpo(list(store.groups()), "grpo", min_version=3)
    assert [g[0].group_id for g in sel.groups] == ["t0@0"]
    assert sel.dropped == {"flat groups (all rewards equal)": 1, "unverified groups": 1, "stale groups": 1,
                           "untrainable episodes": 1, "groups with fewer than 2 trainable episodes": 1}  # fmt: skip
    advantages = [s.advantage for s in sel.groups[0] if s.episode_id]
    assert advantages[0] > 0 > advantages[-1]


# -- the model ----------------------------------------------------------------------------------


def test_masked_logprobs_equal_the_full_logits_on_model_tokens(model_path, tokenizer):
    model, _ = load_policy(small(model=str(model_path)), "cpu")
    e = episode(tokenizer, 0, 0, REPLIES[2], 2)
    ids = torch.tensor(e.token_ids, dtype=torch.long)[None]
    mask = torch.tensor(e.loss_mask, dtype=torch.float32)[None]
    with torch.no_grad():
        full = token_logprobs(model(input_ids=ids).logits, ids) * mask
        picked = masked_logprobs(model, ids, torch.ones_like(ids), mask)
    torch.testing.assert_close(picked, full, atol=1e-5, rtol=1e-5)
    assert (picked[mask == 0] == 0).all()


def sequence_logprob(model, e: Episode) -> float:
    ids = torch.tensor(e.token_ids, dtype=torch.long)[None]
    mask = torch.tensor(e.loss_mask, dtype=torch.float32)[None]
    with torch.no_grad():
        return float(masked_logprobs(model, ids, torch.ones_like(ids), mask).sum())


def test_grpo_makes_the_rewarded_reply_likelier_and_the_other_less_likely(model_path, tokenizer, tmp_path):
    run = tmp_path / "run"
    store = fill_store(run, tokenizer, tasks=1, samples=2, rewards=lambda task, s: float(s == 0))
    good, bad = sorted(store.episodes(), key=lambda e: e.sample_index)
    cfg = small(model=str(model_path), lr=1e-3, epochs=4, groups_per_step=1)
    trainer = Trainer(cfg, run)
    before = sequence_logprob(trainer.model, good), sequence_logprob(trainer.model, bad)
    rows = trainer.train(store)
    after = sequence_logprob(trainer.model, good), sequence_logprob(trainer.model, bad)
    assert len(rows) == 4 and all(np.isfinite(r["loss"]) for r in rows)
    assert after[0] > before[0] + 0.5 and after[1] < before[1] - 0.5, (before, after)


def test_sft_lowers_the_loss_on_its_demonstrations(model_path, tokenizer, tmp_path):
    run = tmp_path / "run"
    fill_store(run, tokenizer, tasks=2, samples=1, rewards=lambda task, s: 1.0)
    cfg = small(model=str(model_path), algo="sft", lr=1e-3, epochs=3, groups_per_step=2)
    rows = Trainer(cfg, run).train(Store(run))
    assert len(rows) == 3 and rows[-1]["loss"] < rows[0]["loss"] - 0.3, [r["loss"] for r in rows]


def test_sft_also_trains_on_the_passed_episodes_of_the_demos_runs(tokenizer, tmp_path):
    """A warm start's second SFT: the model's own successes here, the gold demonstrations in another run."""
    own = fill_store(tmp_path / "own", tokenizer, tasks=2, samples=2, rewards=lambda task, s: float(s == 0))
    gold = fill_store(tmp_path / "gold", tokenizer, tasks=3, samples=1, rewards=lambda task, s: float(task != 2))
    alone = select_from_store(own, small(algo="sft"))
    both = select_from_store(own, small(algo="sft", demos=(str(gold.path),)))
    assert len(alone) == 2 and len(both) == 4  # own: one pass per task; gold: tasks 0 and 1
    assert set(alone) < set(both)
    with pytest.raises(PtrainError, match="demos.*for algo sft"):
        small(algo="grpo", demos=(str(gold.path),))
    with pytest.raises(PtrainError, match="not a ptrain run directory"):
        select_from_store(own, small(algo="sft", demos=(str(tmp_path / "missing"),)))


def test_a_store_without_signal_is_a_clear_error(model_path, tokenizer, tmp_path):
    run = tmp_path / "run"
    fill_store(run, tokenizer, tasks=2, samples=2, rewards=lambda task, s: 0.0)
    with pytest.raises(PtrainError, match="nothing to train on.*2 flat groups"):
        Trainer(small(model=str(model_path)), run).train(Store(run))


# -- checkpoints, resume, export --------------------------------------------------------------


def test_training_resumes_exactly_where_it_stopped(model_path, tokenizer, tmp_path):
    for name in ("straight", "stopped"):
        fill_store(tmp_path / name, tokenizer, tasks=6, samples=2)
    cfg = small(model=str(model_path), lr=1e-3, save_every=1, schedule="linear")
    straight = Trainer(cfg, tmp_path / "straight").train(Store(tmp_path / "straight"))
    first = Trainer(cfg, tmp_path / "stopped").train(Store(tmp_path / "stopped"), stop_at=1)
    rest = Trainer(cfg, tmp_path / "stopped").train(Store(tmp_path / "stopped"))
    assert len(straight) == 3 and len(first) == 1 and len(rest) == 2
    # the same batches in the same order from the same state; MKL's float sums may differ in the last bit
    np.testing.assert_allclose([r["loss"] for r in first + rest], [r["loss"] for r in straight], rtol=1e-5)
    assert_same_weights(adapter_tensors(tmp_path / "straight"), adapter_tensors(tmp_path / "stopped"))
    rows = [json.loads(line) for line in (tmp_path / "stopped" / "metrics" / "train.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2, 3]


@pytest.mark.slow
def test_killed_training_resumes_exactly(model_path, tokenizer, tmp_path):
    """SIGKILL mid-run, then the same command: the final weights equal an uninterrupted run's."""
    for name in ("straight", "killed"):
        fill_store(tmp_path / name, tokenizer, tasks=6, samples=2)
    cmd = [sys.executable, "-m", "ptrain.cli", "train", "--model", str(model_path), "--lora-rank", "4",
           "--groups-per-step", "2", "--save-every", "1", "--lr", "1e-3"]  # fmt: skip
    env = dict(os.environ)
    subprocess.run([*cmd[:4], str(tmp_path / "straight"), *cmd[4:]], check=True, env=env, capture_output=True)
    proc = subprocess.Popen([*cmd[:4], str(tmp_path / "killed"), *cmd[4:]], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    checkpoints = tmp_path / "killed" / "train" / "checkpoints"
    deadline = time.monotonic() + 600
    while not complete_checkpoints(checkpoints) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert complete_checkpoints(checkpoints)[-1].name < "step-000003", "the kill came after training ended"
    subprocess.run([*cmd[:4], str(tmp_path / "killed"), *cmd[4:]], check=True, env=env, capture_output=True)
    a, b = adapter_tensors(tmp_path / "straight"), adapter_tensors(tmp_path / "killed")
    assert complete_checkpoints(checkpoints)[-1].name == "step-000003"
    assert_same_weights(a, b)


def test_export_writes_a_merged_model_that_transformers_loads(model_path, tokenizer, tmp_path):
    from transformers import AutoModelForCausalLM

    run = tmp_path / "run"
    store = fill_store(run, tokenizer, tasks=2, samples=2)
    trainer = Trainer(small(model=str(model_path), lr=1e-2, max_steps=1), run)
    trainer.train(store)
    out = export_merged(complete_checkpoints(run / "train" / "checkpoints")[-1], tmp_path / "merged")
    merged = AutoModelForCausalLM.from_pretrained(out)
    assert not list(out.glob("adapter*")) and (out / "tokenizer.json").is_file()
    ids = torch.tensor(np.array([next(store.episodes()).token_ids]), dtype=torch.long)
    trainer.model.eval()
    with torch.no_grad():
        torch.testing.assert_close(merged(input_ids=ids).logits, trainer.model(input_ids=ids).logits,
                                   atol=1e-4, rtol=1e-4)  # fmt: skip
        base = AutoModelForCausalLM.from_pretrained(model_path)(input_ids=ids).logits
    assert not torch.allclose(base, merged(input_ids=ids).logits, atol=1e-4), "export lost the trained adapter"


def test_shared_prefix_stops_before_the_first_model_token_and_ignores_short_ones():
    prompt = np.arange(100, 140)
    a = Sequence(np.r_[prompt, [7, 8, 9]], np.r_[np.zeros(40), [1, 1, 1]].astype(bool), np.zeros(43), 1.0, "g", "a")
    b = Sequence(np.r_[prompt, [5, 6]], np.r_[np.zeros(40), [1, 1]].astype(bool), np.zeros(42), -1.0, "g", "b")
    assert shared_prefix([a, b]) == 39  # the last prompt token stays in each row: it predicts the first model token
    c = Sequence(np.r_[prompt[:10], [1] * 30, [7]], np.r_[np.zeros(40), [1]].astype(bool), np.zeros(41), 0, "h", "c")
    assert shared_prefix([a, c]) == 0  # 10 shared tokens: not worth it
    assert shared_prefix([a]) == 0


def test_micro_batches_sharing_prefixes_keep_groups_together_within_the_budget():
    seqs = [seq(n, g) for g, n in (("a", 60), ("b", 50), ("a", 70), ("b", 40), ("a", 65))]
    batches = micro_batches(seqs, 150, share_prefix=True)
    flat = [(s.group_id, len(s.token_ids)) for b in batches for s in b]
    assert flat == [("a", 70), ("a", 65), ("a", 60), ("b", 50), ("b", 40)]  # every sequence once, groups together
    assert len(batches) < len(micro_batches(seqs, 150))  # the shared prefix counted once fits more rows
    for b in batches:
        prefix = shared_prefix(b)
        assert len(b) == 1 or prefix + len(b) * (max(len(s.token_ids) for s in b) - prefix) <= 150


def test_a_large_budget_does_not_mix_groups_and_lose_their_shared_prompts():
    prompts = {g: np.arange(300) + 1000 * i for i, g in enumerate("abcd")}
    seqs = [Sequence(np.r_[prompts[g], np.full(20 + k, 5)], np.r_[np.zeros(300), np.ones(20 + k)].astype(bool),
                     np.zeros(320 + k), 1.0, g, f"{g}{k}") for g in "abcd" for k in range(8)]  # fmt: skip
    for budget in (4096, 16384):
        batches = micro_batches(seqs, budget, share_prefix=True)
        assert all(len({s.group_id for s in b}) == 1 for b in batches), budget
        total = sum(cost(b, True) for b in batches)
        assert total < sum(cost(b, False) for b in micro_batches(seqs, budget)), "sharing computes fewer tokens"


def test_logprobs_and_gradients_with_a_shared_prefix_equal_the_full_rows(tokenizer):
    from ptrain.train.model import load_policy, masked_logprobs, trainable_parameters

    torch.manual_seed(0)
    model, _ = load_policy(TrainConfig(lora_rank=4), "cpu")
    for name, p in model.named_parameters():
        if "lora_B" in name:
            p.data.normal_(0, 0.02)  # B starts at zero: give the adapter something to differentiate
    prompt = torch.randint(100, 20000, (48,))
    lengths = (90, 75, 60)
    ids = torch.zeros(3, 90, dtype=torch.long)
    attn, mask = torch.zeros(3, 90, dtype=torch.long), torch.zeros(3, 90)
    for i, n in enumerate(lengths):
        ids[i, :48], ids[i, 48:n] = prompt, torch.randint(100, 20000, (n - 48,))
        attn[i, :n], mask[i, 50 : n - 3] = 1, 1
    params = trainable_parameters(model)

    def run(prefix: int):
        for p in params:
            p.grad = None
        logprobs = masked_logprobs(model, ids, attn, mask, prefix)
        (logprobs * mask).sum().backward()
        return logprobs.detach(), [p.grad.clone() for p in params]

    full, full_grads = run(0)
    shared, shared_grads = run(47)
    torch.testing.assert_close(shared, full, atol=1e-5, rtol=1e-5)
    for a, b in zip(shared_grads, full_grads, strict=True):  # summed in another order: float32 rounding only
        assert float((a - b).norm()) <= 1e-4 * float(b.norm()) + 1e-7
