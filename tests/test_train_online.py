"""Online training: the engine samples from the trainer's own weights; rounds of rollout then a step, resumable."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
import time
from types import SimpleNamespace

import pytest
import torch
from test_train import fill_store

from ptrain.engine.base import Sampling
from ptrain.engine.hf import HFEngine
from ptrain.engine.scripted import ScriptedEngine
from ptrain.online import train_online
from ptrain.online.rounds import RoundClock, select_round
from ptrain.rollout.chat import ChatFormat
from ptrain.rollout.config import RolloutConfig
from ptrain.rollout.gold import gold_replies
from ptrain.store import Store
from ptrain.taskpack import load
from ptrain.train.batch import select_grpo
from ptrain.train.checkpoint import complete_checkpoints
from ptrain.train.config import TrainConfig
from ptrain.train.loop import Trainer

TASKS = ("text/count-lines", "files-shell/create-hello")


async def test_engine_samples_from_the_trainers_weights_as_they_train(model_path, tokenizer, tmp_path):
    store = fill_store(tmp_path / "run", tokenizer, tasks=2, samples=2)
    trainer = Trainer(TrainConfig(model=str(model_path), lora_rank=4, lr=5e-2, tensorboard=False), tmp_path / "run")
    trainer.start(1)
    engine = HFEngine(trainer.model, max_batch=2, kv_budget_tokens=4096)
    assert engine.module is trainer.model  # the same object: no copy of the weights
    prompt = tokenizer.encode("<|im_start|>user\nSay something.<|im_end|>\n<|im_start|>assistant\n")
    greedy = Sampling(max_new_tokens=8, temperature=0.0)
    try:
        before = await engine.generate(prompt, greedy)
        with engine.paused():
            trainer.step(select_grpo(list(store.groups())).groups)
            trainer.model.eval()
        engine.policy_version = trainer.policy_version
        after = await engine.generate(prompt, greedy)
    finally:
        await engine.close()
    assert after.policy_version == 1 and before.policy_version == 0
    assert before.logprobs != after.logprobs  # the step changed what the engine computes


def alternating(fmt, pack, tasks):
    """Gold on every other episode (episodes run one at a time), an empty answer on the rest: groups with signal."""
    gold = gold_replies(fmt, pack, tasks)
    episodes = [0]

    def reply(prompt: str, turn: int) -> str:
        if turn == 0:
            episodes[0] += 1
        return gold(prompt, turn) if episodes[0] % 2 else "```bash\nsubmit\n```"

    return reply


@pytest.mark.slow
async def test_online_rounds_roll_out_verify_step_and_resume(model_path, tokenizer, tmp_path, podman_url):
    pack = load("terminal-coding")
    tasks = [t for t in pack.tasks("train") if t.id in TASKS]
    fmt = ChatFormat(tokenizer, "bash")
    engine = ScriptedEngine(fmt, alternating(fmt, pack, tasks))
    cfg = TrainConfig(model=str(model_path), taskpack="terminal-coding", lora_rank=4, groups_per_step=2,
                      save_every=1, tensorboard=False)  # fmt: skip
    rollout = RolloutConfig(task_ids=TASKS, samples=2, concurrency=1, max_new_tokens=256, flush_interval_s=0.5)
    run = tmp_path / "run"
    rows = await train_online(run, cfg, rollout, rounds=2, engine=engine)
    assert [(r["round"], r["policy_version"], r["stepped"], r["groups_with_signal"]) for r in rows] == [
        (1, 0, True, 2), (2, 1, True, 2)]  # fmt: skip
    store = Store(run)
    assert sorted((e.task_id, e.policy_version) for e in store.episodes()) == sorted(
        (t, v) for t in TASKS for v in (0, 1) for _ in range(2))  # fmt: skip
    assert complete_checkpoints(run / "train" / "checkpoints")[-1].name == "step-000002"

    again = await train_online(run, cfg, rollout, rounds=3, engine=engine)  # resumes: only round 3 runs
    assert [r["round"] for r in again] == [3] and again[0]["policy_version"] == 2
    assert len(list(Store(run).episodes())) == 12
    logged = [json.loads(line)["round"] for line in (run / "metrics" / "online.jsonl").read_text().splitlines()]
    assert logged == [1, 2, 3]
    assert torch.load(complete_checkpoints(run / "train" / "checkpoints")[-1] / "trainer.pt", weights_only=False)


async def test_a_time_limit_stops_at_a_round_boundary_and_a_stop_mid_step_keeps_the_step(
    model_path, tokenizer, tmp_path, podman_url, monkeypatch
):
    pack = load("terminal-coding")
    tasks = [t for t in pack.tasks("train") if t.id in TASKS]
    fmt = ChatFormat(tokenizer, "bash")
    engine = ScriptedEngine(fmt, alternating(fmt, pack, tasks))
    cfg = TrainConfig(model=str(model_path), taskpack="terminal-coding", lora_rank=4, groups_per_step=2,
                      save_every=10, tensorboard=False, minutes=0.001)  # fmt: skip
    rollout = RolloutConfig(task_ids=TASKS, samples=2, concurrency=1, max_new_tokens=256, flush_interval_s=0.5)
    run = tmp_path / "run"
    rows = await train_online(run, cfg, rollout, rounds=5, engine=engine)  # the first round always starts
    assert [r["round"] for r in rows] == [1]
    assert complete_checkpoints(run / "train" / "checkpoints")[-1].name == "step-000001"

    # stopped (the task cancelled, as Ctrl-C does) while round 2's step runs: the step finishes and is saved
    stepping, step = threading.Event(), Trainer.step

    def slow_step(self, *args, **kwargs):
        stepping.set()
        time.sleep(1.0)
        return step(self, *args, **kwargs)

    monkeypatch.setattr(Trainer, "step", slow_step)
    cfg = dataclasses.replace(cfg, minutes=0.0)
    job = asyncio.create_task(train_online(run, cfg, rollout, rounds=5, engine=engine))
    while not stepping.is_set():
        await asyncio.sleep(0.05)
    job.cancel()
    with pytest.raises(asyncio.CancelledError):
        await job
    assert complete_checkpoints(run / "train" / "checkpoints")[-1].name == "step-000002"
    logged = [json.loads(line)["round"] for line in (run / "metrics" / "online.jsonl").read_text().splitlines()]
    assert logged == [1, 2]
    monkeypatch.setattr(Trainer, "step", step)
    again = await train_online(run, cfg, rollout, rounds=3, engine=engine)  # resumes after the kept step
    assert [(r["round"], r["policy_version"]) for r in again] == [(3, 2)]


def test_a_rounds_pass_rate_is_its_stored_verdicts_so_a_resumed_round_reports_them(tokenizer, tmp_path):
    # stored before the process that selects the round started: its own rollout verified none of them
    store = fill_store(tmp_path / "run", tokenizer, tasks=3, samples=4, rewards=lambda task, s: float(s < task))
    trainer = SimpleNamespace(round=0, policy_version=0, cfg=TrainConfig())
    _, selection, summary = select_round(trainer, store, SimpleNamespace(name="tp"), ("t1", "t2"), 0, rollout_s=0.0)
    assert summary["pass_rate"] == 3 / 8 and summary["reward_mean"] == 3 / 8  # t1 passed 1 of 4, t2 2 of 4
    assert summary["groups_with_signal"] == 2
    _, _, nothing = select_round(trainer, store, SimpleNamespace(name="tp"), ("t9",), 0, rollout_s=0.0)
    assert nothing["pass_rate"] is None and nothing["reward_mean"] is None


def test_the_round_clock_starts_a_round_only_if_the_longest_so_far_would_end_in_time():
    clock = RoundClock(minutes=1, started=time.monotonic() - 30)
    assert clock.next_fits()  # nothing measured yet: the first round starts
    clock.took(20)
    assert clock.next_fits()  # 30 + 20 <= 60
    clock.took(35)
    assert not clock.next_fits() and "another (up to 35 s) would end past 1.0 min" in clock.stop_line(2)
    assert RoundClock(minutes=0, started=time.monotonic() - 1e6).next_fits()  # 0: no limit


async def test_the_curriculum_picks_the_rounds_tasks_and_logs_its_estimates(
    model_path, tokenizer, tmp_path, podman_url
):
    pack = load("terminal-coding")
    tasks = [t for t in pack.tasks("train") if t.id in TASKS]
    fmt = ChatFormat(tokenizer, "bash")
    engine = ScriptedEngine(fmt, alternating(fmt, pack, tasks))
    cfg = TrainConfig(model=str(model_path), taskpack="terminal-coding", lora_rank=4, groups_per_step=1,
                      save_every=1, tensorboard=False, curriculum=True)  # fmt: skip
    rollout = RolloutConfig(task_ids=TASKS, samples=2, concurrency=1, max_new_tokens=256, flush_interval_s=0.5)
    rows = await train_online(tmp_path / "run", cfg, rollout, rounds=2, engine=engine)
    assert [r["tasks"] for r in rows] == [1, 1] and all(r["stepped"] for r in rows)
    snap = rows[-1]["curriculum"]
    assert snap["tier"] in {t.difficulty for t in tasks} and snap["tiers"][snap["tier"]]["seen"] >= 1
    logged = [json.loads(line) for line in (tmp_path / "run" / "metrics" / "online.jsonl").read_text().splitlines()]
    assert [row["curriculum"]["tiers"] for row in logged] == [r["curriculum"]["tiers"] for r in rows]
    assert all(0 < row["rss_gb"] <= row["peak_rss_gb"] and row["released_gb"] >= 0 for row in logged)
    again = await train_online(tmp_path / "run", cfg, rollout, rounds=3, engine=engine)  # rebuilt from the store
    assert [r["round"] for r in again] == [3]
    assert sum(t["seen"] for t in again[0]["curriculum"]["tiers"].values()) >= snap["tiers"][snap["tier"]]["seen"]


@pytest.mark.podman
async def test_gold_demonstrations_become_sft_training_data(model_path, tmp_path, podman_url):
    from ptrain.cli.rollout import run_rollout

    run = tmp_path / "demos"
    rollout = RolloutConfig(engine="gold", model=str(model_path), categories=("shell-basics",), tasks=4, samples=1,
                            concurrency=2, max_turns=3, max_new_tokens=128, flush_interval_s=0.5)  # fmt: skip
    report = await run_rollout(run, rollout, live=False)
    assert report.verified == 4 and report.passed == 4
    episodes = list(Store(run).episodes())
    assert all(e.model == "gold" and e.model_tokens > 0 for e in episodes)
    cfg = TrainConfig(model=str(model_path), algo="sft", lora_rank=4, groups_per_step=4, tensorboard=False)
    rows = Trainer(cfg, run).train(Store(run))
    assert len(rows) == 1 and rows[0]["sequences"] == 4 and rows[0]["loss"] > 0
    assert rows[0]["model_tokens"] == sum(e.model_tokens for e in episodes)


@pytest.mark.slow
def test_warmstart_runs_gold_sft_rejection_sampling_and_sft_again_and_resumes(model_path, tmp_path, podman_url):
    from typer.testing import CliRunner

    from ptrain.cli import app

    run = tmp_path / "warm"
    args = ["warmstart", str(run), "--taskpack", "terminal-coding", "--category", "shell-basics", "--demos", "4",
            "--own-tasks", "2", "--own-samples", "2", "--epochs", "1", "--own-epochs", "1", "--lora-rank", "4",
            "--groups-per-step", "4", "--max-turns", "2", "--max-new-tokens", "48", "--concurrency", "4",
            "--model", str(model_path)]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    counts = json.loads((run / "warmstart.json").read_text())
    assert counts["gold_episodes"] == 4 and counts["demos"] == 4 and counts["own_episodes"] == 4
    assert (run / "gold-model" / "config.json").is_file() and (run / "model" / "config.json").is_file()
    own = [e for e in Store(run / "own").episodes()]
    assert {e.model for e in own} == {str(run / "gold-model")}
    steps = complete_checkpoints(run / "own" / "train" / "checkpoints")
    assert steps, "the second SFT saved no checkpoint"
    again = CliRunner().invoke(app, args)  # everything done: nothing rolled out or trained again
    assert again.exit_code == 0, again.output
    assert len(list(Store(run / "own").episodes())) == 4
    assert complete_checkpoints(run / "own" / "train" / "checkpoints") == steps


def test_a_warm_start_samples_its_tasks_from_named_task_ids():
    """A rollout runs every task it names, so the warm start draws its `--demos` sample itself."""
    from ptrain.cli.warmstart import sample_of

    pack = load("terminal-coding")
    named = tuple(sorted(t.id for t in pack.tasks("train") if t.category == "shell-basics"))[:20]
    rollout = RolloutConfig(task_ids=named, seed=3)
    drawn = sample_of(rollout, 5)
    assert drawn["tasks"] is None and len(drawn["task_ids"]) == 5 and set(drawn["task_ids"]) < set(named)
    assert sample_of(rollout, 5) == drawn and sample_of(RolloutConfig(task_ids=named, seed=4), 5) != drawn
    assert sample_of(rollout, 50)["task_ids"] == named
    assert sample_of(RolloutConfig(), 5) == {"tasks": 5}
