"""Strategy fsdp (FSDP2) on this CPU with two gloo processes: the same weights as one process, exact
resume after SIGKILL, sharded checkpoints exported whole; float32 master weights under bfloat16
compute; the output layer's logits recomputed in the backward pass instead of kept."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from test_train import adapter_tensors, fill_store, small

from ptrain.errors import ConfigError
from ptrain.train.checkpoint import complete_checkpoints
from ptrain.train.loop import Trainer
from ptrain.train.model import masked_logprobs

WORKER = Path(__file__).with_name("ddp_train.py")
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]


def worker(run: Path, model_path: Path, *settings: str, processes: int = 1) -> None:
    command = [*TORCHRUN, str(WORKER)] if processes == 2 else [sys.executable, str(WORKER)]
    done = subprocess.run([*command, str(run), str(model_path), *settings], capture_output=True, text=True,
                          timeout=1800)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("lora", [True, False], ids=["lora", "full"])
def test_two_fsdp_processes_end_with_the_weights_of_one(model_path, tokenizer, tmp_path, lora):
    # 9 groups, 3 a step: one rank gets 2 groups a step and the other 1, so their micro-batch counts differ
    fill_store(tmp_path / "two", tokenizer, tasks=9, samples=2)
    shutil.copytree(tmp_path / "two", tmp_path / "one")
    settings = ['strategy="fsdp"', "groups_per_step=3", f"lora={str(lora).lower()}", "save_every=1"]
    if not lora:
        settings.append("lr=1e-5")
    worker(tmp_path / "two", model_path, *settings, processes=2)
    worker(tmp_path / "one", model_path, *settings)

    two, one = (torch.load(tmp_path / run / "rank-0.pt") for run in ("two", "one"))
    assert torch.load(tmp_path / "two" / "rank-1.pt").keys() == two.keys()
    lr = 1e-3 if lora else 1e-5
    # as in tests/test_train_ddp.py: other micro-batches sum the gradients in another order, so Adam moves a
    # rare element whose near-zero gradient flips sign by up to 2 lr; a halved or missing reduction moves most
    for key in one:
        diff = (two[key] - one[key]).abs()
        assert diff.max() <= 2 * lr and (diff > lr / 100).float().mean() < 0.01, (key, float(diff.max()))
    losses = [json.loads((tmp_path / run / "rank-0.json").read_text()) for run in ("two", "one")]
    assert len(losses[0]) == 3
    torch.testing.assert_close(torch.tensor(losses[0]), torch.tensor(losses[1]), atol=1e-5, rtol=1e-4)

    last = complete_checkpoints(tmp_path / "two" / "train" / "checkpoints")[-1]
    assert (last / "sharded" / "model").is_dir() and (last / "sharded" / "optimizer").is_dir()
    out = tmp_path / "exported"
    done = subprocess.run([sys.executable, "-m", "ptrain.cli", "train", "export", str(tmp_path / "two"), "--out",
                           str(out)], capture_output=True, text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    if not lora:  # the plain checkpoint holds the trained weights themselves
        from transformers import AutoModelForCausalLM

        exported = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32).state_dict()
        for key, value in two.items():
            torch.testing.assert_close(exported[key], value, atol=0, rtol=0)


@pytest.mark.slow
def test_fsdp_under_two_processes_resumes_exactly_after_sigkill(model_path, tokenizer, tmp_path):
    for name in ("straight", "killed"):
        fill_store(tmp_path / name, tokenizer, tasks=6, samples=2)
    cmd = [*TORCHRUN, "-m", "ptrain.cli", "train", "RUN", "--model", str(model_path), "--lora-rank", "4",
           "--groups-per-step", "2", "--save-every", "1", "--lr", "1e-3", "--strategy", "fsdp"]  # fmt: skip

    def command(run: str) -> list[str]:
        return [str(tmp_path / run) if part == "RUN" else part for part in cmd]

    subprocess.run(command("straight"), check=True, capture_output=True, timeout=1800)
    proc = subprocess.Popen(command("killed"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    checkpoints = tmp_path / "killed" / "train" / "checkpoints"
    deadline = time.monotonic() + 900
    while not complete_checkpoints(checkpoints) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)  # torchrun and both ranks
    proc.wait()
    assert complete_checkpoints(checkpoints)[-1].name < "step-000003", "the kill came after training ended"
    subprocess.run(command("killed"), check=True, capture_output=True, timeout=1800)
    assert complete_checkpoints(checkpoints)[-1].name == "step-000003"
    a, b = adapter_tensors(tmp_path / "straight"), adapter_tensors(tmp_path / "killed")
    assert a.keys() == b.keys() and all(torch.allclose(a[k], b[k], rtol=1e-5, atol=1e-7) for k in a)
    rows = [json.loads(line) for line in (tmp_path / "killed" / "metrics" / "train.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2, 3]


@pytest.mark.parametrize("strategy", ["ddp", "fsdp"])
def test_full_fine_tuning_at_a_small_learning_rate_in_bfloat16_compute_changes_the_weights(
    model_path, tokenizer, tmp_path, strategy
):
    """bfloat16 weights would round most updates of lr 2e-6 to nothing; float32 master weights keep them."""
    store = fill_store(tmp_path / "run", tokenizer, tasks=2, samples=2)
    trainer = Trainer(small(model=str(model_path), lora=False, lr=2e-6, dtype="bfloat16", strategy=strategy,
                            max_steps=1), tmp_path / "run")  # fmt: skip
    assert all(p.dtype == torch.float32 for p in trainer.params)
    before = [p.detach().clone() for p in trainer.params]
    trainer.train(store)
    changed = sum(int((p.detach() != b).sum()) for p, b in zip(trainer.params, before, strict=True))
    total = sum(b.numel() for b in before)
    assert changed / total > 0.5, changed / total


@pytest.mark.parametrize("strategy", ["ddp", "fsdp"])
def test_lora_in_bfloat16_compute_keeps_the_frozen_base_in_bfloat16_and_the_adapters_float32(
    model_path, tokenizer, tmp_path, strategy
):
    """The base is never updated, so it needs no float32 copy (half a 7B model's memory); the adapters do."""
    store = fill_store(tmp_path / "run", tokenizer, tasks=2, samples=2)
    trainer = Trainer(small(model=str(model_path), dtype="bfloat16", strategy=strategy, max_steps=1), tmp_path / "run")
    frozen = [p for p in trainer.model.parameters() if not p.requires_grad]
    assert frozen and all(p.dtype == torch.bfloat16 for p in frozen)
    assert trainer.params and all(p.dtype == torch.float32 for p in trainer.params)
    before = [p.detach().clone() for p in trainer.params]
    rows = trainer.train(store)
    assert torch.isfinite(torch.tensor(rows[0]["loss"]))
    assert any(not torch.equal(p.detach(), b) for p, b in zip(trainer.params, before, strict=True))


def test_online_training_refuses_to_run_under_torchrun(tmp_path, monkeypatch):
    import asyncio

    from ptrain.online import train_online
    from ptrain.rollout.config import RolloutConfig
    from ptrain.train.config import TrainConfig

    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(ConfigError, match="not under torchrun"):
        asyncio.run(train_online(tmp_path / "run", TrainConfig(), RolloutConfig(taskpack="terminal-coding"), 1))
    monkeypatch.setenv("WORLD_SIZE", "1")
    with pytest.raises(ConfigError, match="needs strategy ddp"):
        asyncio.run(train_online(tmp_path / "run", TrainConfig(strategy="fsdp"),
                                 RolloutConfig(taskpack="terminal-coding"), 1))  # fmt: skip
    assert not (tmp_path / "run").exists()  # refused before anything was written


class Decoder(torch.nn.Module):
    """A stand-in transformer: an embedding, so the test is about the output layer alone."""

    def __init__(self, vocab: int, hidden: int):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)

    def forward(self, input_ids, attention_mask=None):
        return type("Out", (), {"last_hidden_state": self.embed(input_ids)})


class Tiny(torch.nn.Module):
    def __init__(self, vocab: int = 50_000, hidden: int = 8):
        super().__init__()
        self.decoder, self.head = Decoder(vocab, hidden), torch.nn.Linear(hidden, vocab, bias=False)

    def get_decoder(self):
        return self.decoder

    def get_output_embeddings(self):
        return self.head


def test_the_output_layers_logits_are_recomputed_in_the_backward_pass_not_kept():
    torch.manual_seed(0)
    model = Tiny()
    ids = torch.randint(0, 50_000, (2, 2048))
    mask = torch.ones_like(ids, dtype=torch.float32)
    attention = torch.ones_like(ids)
    temperature = torch.tensor([0.7, 1.0])
    saved = []

    def keep(tensor):
        saved.append(tensor.numel() * tensor.element_size())
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(keep, lambda t: t):
        logprobs = masked_logprobs(model, ids, attention, mask, temperature=temperature)
    # all 4,094 scored positions' float32 logits would be 4094 * 50,000 * 4 bytes = 819 MB
    assert sum(saved) < 20e6, sum(saved)
    (-(logprobs * mask).sum()).backward()
    recomputed = [p.grad.clone() for p in model.parameters()]

    model.zero_grad()
    hidden = model.decoder(ids).last_hidden_state[:, :-1]  # the same logprobs, written out with every logit kept
    full = torch.log_softmax(model.head(hidden).float() / temperature[:, None, None], -1)
    expected = full.gather(-1, ids[:, 1:, None]).squeeze(-1)
    torch.testing.assert_close(logprobs[:, 1:], expected, atol=1e-5, rtol=1e-5)
    (-expected.sum()).backward()
    for got, want in zip(recomputed, [p.grad for p in model.parameters()], strict=True):
        torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-4)


def test_the_worked_7b_config_in_the_docs_is_a_valid_train_config(tmp_path):
    """docs/training.md's TOML block loads with every key known and every value accepted."""
    from ptrain.train.config import load_train_config

    text = (Path(__file__).parents[1] / "docs" / "training.md").read_text()
    block = text.split("```toml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "train-7b.toml").write_text(block)
    cfg = load_train_config(tmp_path / "train-7b.toml")
    assert (cfg.strategy, cfg.lora, cfg.gradient_checkpointing) == ("fsdp", False, True)
