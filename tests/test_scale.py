"""Scale-out on a real Ray cluster: a head and a second node process on this machine, started here.

The workers are real Ray actors in their own processes, with real podman sandboxes; the rollouts
replay gold solutions (the `gold` engine) so that the tests measure the distribution of work, not
the model, except the weight-delivery test, which runs the real model in a worker.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import torch

from ptrain.engine.weights import policy_payload
from ptrain.rollout.config import RolloutConfig
from ptrain.store import Store
from ptrain.testing import ray_cluster as ray_cluster_here

pytestmark = pytest.mark.slow
TASKS = dict(taskpack="terminal-coding", categories=("shell-basics",), split="train")


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory, podman_url):
    """`ray start --head` on 127.0.0.1 plus a second node, one CPU each; stopped after the module."""
    address = ray_cluster_here.start(tmp_path_factory.mktemp("ray"), nodes=2)
    try:
        yield address
    finally:
        ray_cluster_here.stop()


def _config(address: str, **overrides) -> RolloutConfig:
    base = dict(engine="gold", tasks=6, samples=2, concurrency=2, max_turns=4, ray=address, workers=2,
                action_format="bash", flush_every=1)  # fmt: skip
    return RolloutConfig(**{**TASKS, **base, **overrides})


def _task_ids(cfg: RolloutConfig) -> list[str]:
    from ptrain.taskpack import load
    from ptrain.verify import select_tasks

    return [t.id for t in select_tasks(load(cfg.taskpack), [cfg.split], (), cfg.tasks, cfg.seed, cfg.categories, ())]


def _writers(run: Path, kind: str) -> set[str]:
    """The writer processes (host-pid) whose shards are in the run."""
    return {"-".join(p.name.split("-")[1:3]) for p in (run / kind).glob("*.parquet")}


def test_rollout_over_two_workers_lands_every_episode_once(ray_cluster, tmp_path):
    from ptrain.cli.rollout import run_rollout

    run = tmp_path / "run"
    report = asyncio.run(run_rollout(run, _config(ray_cluster), live=False))
    pairs = Counter((e.task_id, e.sample_index) for e in Store(run).episodes())
    assert len(pairs) == 12 and set(pairs.values()) == {1}, pairs
    assert report.finished == 12 and report.verified == 12 and report.passed == 12, report.as_dict()
    assert len(Store(run).latest_verdicts()) == 12
    assert len(_writers(run, "episodes")) == 2, "both workers wrote shards"
    again = asyncio.run(run_rollout(run, _config(ray_cluster), live=False))
    assert again.planned == 0 and again.skipped == 12
    assert len(list(Store(run).episodes())) == 12


def test_a_killed_worker_loses_and_duplicates_nothing(ray_cluster, tmp_path):
    from ptrain.scale.workers import Fleet, RolloutReport, merge

    run = tmp_path / "run"
    cfg = _config(ray_cluster, tasks=8)
    tasks = _task_ids(cfg)
    assert len(tasks) == 8
    report, killed = RolloutReport(), []

    async def go() -> None:
        fleet = Fleet(run, cfg)
        infos = await fleet.start()
        victim = infos[1]

        def on_result(fields: dict) -> None:
            merge(report, fields)
            if not killed:  # the victim holds a group in flight now: kill its process outright
                os.kill(victim["pid"], signal.SIGKILL)
                killed.append(victim["pid"])

        try:
            await fleet.map("rollout", tasks, on_result=on_result)
            assert len(fleet.deaths) == 1 and not fleet.members[1].alive
        finally:
            await fleet.close()

    asyncio.run(go())
    store = Store(run)
    pairs = Counter((e.task_id, e.sample_index) for e in store.episodes())
    assert set(pairs) == {(t, i) for t in tasks for i in range(2)}, "every episode landed"
    assert set(pairs.values()) == {1}, f"duplicated: {[p for p, n in pairs.items() if n > 1]}"
    assert len(store.latest_verdicts()) == 16, "the survivor verified what the dead worker left unverified"


def test_verify_over_workers_writes_one_verdict_each(ray_cluster, tmp_path):
    from ptrain.cli.rollout import run_rollout
    from ptrain.scale.workers import ray_verify

    run = tmp_path / "run"
    asyncio.run(run_rollout(run, _config(ray_cluster, workers=1, verify=False), live=False))
    assert not Store(run).latest_verdicts()
    result = asyncio.run(ray_verify(run, _config(ray_cluster, verify_concurrency=1), False, lambda n: None))
    assert result["total"] == result["verified"] == result["passed"] == 12, result
    assert len(_writers(run, "verdicts")) == 2
    rows = pq.read_table(run / "verdicts", columns=["episode_id"]).column("episode_id").to_pylist()
    assert len(rows) == 12 == len(set(rows)), "one verdict per episode, none twice"


def test_delivered_weights_are_what_the_next_episodes_report(ray_cluster, tmp_path, model_path):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from ptrain.scale.workers import Fleet

    policy = get_peft_model(AutoModelForCausalLM.from_pretrained(model_path),
                            LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]))  # fmt: skip
    with torch.no_grad():
        for name, p in policy.named_parameters():
            if "lora_B" in name:
                p.normal_(std=0.01)
    run = tmp_path / "run"
    cfg = _config(ray_cluster, engine="hf", engine_process=False, workers=1, tasks=1, samples=1, max_turns=1,
                  max_new_tokens=8, verify=False, action_format="bash")  # weights merge into an engine in process  # fmt: skip
    task = _task_ids(cfg)[0]

    async def go() -> tuple[list[int], list[dict]]:
        fleet = Fleet(run, cfg)
        try:
            await fleet.start()
            versions = await fleet.deliver(policy_payload(policy), 7)
            await fleet.map("rollout", [task])
            return versions, await fleet.poll()
        finally:
            await fleet.close()

    versions, progress = asyncio.run(go())
    assert versions == [7] and progress[0]["policy_version"] == 7
    episodes = list(Store(run).episodes())
    assert [e.policy_version for e in episodes] == [7] and episodes[0].status != "error"
    assert episodes[0].metadata["policy_versions"] == [7]


def test_online_training_with_rollouts_on_the_workers(ray_cluster, tmp_path, model_path):
    """Two rounds, trainer here, the real model on a worker: every step's weights reach the worker."""
    from ptrain.online import train_online
    from ptrain.train.config import TrainConfig

    cfg = TrainConfig(model=str(model_path), taskpack="terminal-coding", lora_rank=4, groups_per_step=2,
                      save_every=1, tensorboard=False, lr=1e-3)  # fmt: skip
    rollout = _config(ray_cluster, engine="hf", model=str(model_path), workers=1, tasks=4, samples=2, max_turns=1,
                      max_new_tokens=24, difficulties=("easy",), flush_interval_s=0.5)  # fmt: skip
    run = tmp_path / "run"
    rows = asyncio.run(train_online(run, cfg, rollout, rounds=2))
    assert [r["round"] for r in rows] == [1, 2] and all(r["workers"] == 1 for r in rows)
    for row in rows:
        if row["stepped"]:
            assert row["worker_versions"] == [row["policy_version"] + 1], row
    episodes = list(Store(run).episodes())
    assert len(episodes) == 8 and len({(e.task_id, e.sample_index, e.policy_version) for e in episodes}) == 8
    final = rows[-1]["policy_version"] + rows[-1]["stepped"]
    assert all(0 <= e.policy_version <= final for e in episodes)
    assert (run / "train" / "checkpoints" / "step-000002").exists() or not all(r["stepped"] for r in rows)
