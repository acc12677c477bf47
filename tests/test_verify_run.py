"""`ptrain verify RUN` on a real store: 100 episodes verified concurrently, resumable, re-verifiable."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ptrain_terminal_coding import TASKPACK

from ptrain import taskpack
from ptrain.episode import Episode
from ptrain.sandbox import PoolSet
from ptrain.store import Store
from ptrain.verify import replay, select_tasks

PTRAIN = str(Path(sys.executable).parent / "ptrain")


def ptrain(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PTRAIN, *args], capture_output=True, text=True, timeout=900, env={**os.environ, "COLUMNS": "200"}
    )


@pytest.fixture(scope="module")
async def run_with_episodes(tmp_path_factory, podman_url):
    """A run of 100 episodes over 5 tasks: odd samples carry the gold artifact, even ones a no-op."""
    store = Store(tmp_path_factory.mktemp("run"), create=True)
    tasks = select_tasks(TASKPACK, taskpack.SPLITS)[:5]
    async with PoolSet(size=2) as pools:
        gold = await asyncio.gather(*(replay(TASKPACK, t, TASKPACK.gold(t), pools) for t in tasks))
        noop = await asyncio.gather(*(replay(TASKPACK, t, [], pools) for t in tasks))
    expected = {}
    with store.writer() as writer:
        for i in range(100):
            t = tasks[i % 5]
            artifact = (gold if i % 2 else noop)[i % 5]
            episode = Episode(run="r", taskpack="terminal-coding", task_id=t.id, split=t.split, group_id=f"g{i // 4}",
                              sample_index=i % 4, group_size=4, artifact_sha256=store.put_artifact(artifact))  # fmt: skip
            writer.add(episode)
            expected[episode.episode_id] = 1.0 if i % 2 else 0.0
    return store, expected


@pytest.mark.slow
def test_a_hundred_episodes_verify_resume_and_reverify(run_with_episodes):
    store, expected = run_with_episodes
    first = ptrain("verify", str(store.path), "--concurrency", "12")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "100 verified (50 passed)" in first.stdout and "0 failed" in first.stdout
    verdicts = Store(store.path).latest_verdicts()
    assert {e: v.reward for e, v in verdicts.items()} == expected

    again = ptrain("verify", str(store.path))
    assert "0 verified" in again.stdout  # nothing left to do: resumed, not repeated

    redo = ptrain("verify", str(store.path), "--reverify")
    assert "100 verified (50 passed)" in redo.stdout
    assert len(Store(store.path).latest_verdicts()) == 100


def test_an_episode_whose_task_is_gone_is_reported_and_gets_no_verdict(tmp_path):
    store = Store(tmp_path / "run", create=True)
    with store.writer() as writer:
        writer.add(Episode(run="r", taskpack="terminal-coding", task_id="no/such-task", split="train", group_id="g",
                           sample_index=0, group_size=1, artifact_sha256=store.put_artifact(b"x")))  # fmt: skip
    done = ptrain("verify", str(store.path))
    assert done.returncode == 1
    assert "task no/such-task is not in terminal-coding any more" in done.stdout
    assert Store(store.path).latest_verdicts() == {}


async def test_reverify_skips_and_reports_a_damaged_artifact(tmp_path, podman_url):
    """One damaged artifact among good ones: it is named and skipped, every other episode still gets its verdict."""
    store = Store(tmp_path / "run", create=True)
    tasks = select_tasks(TASKPACK, taskpack.SPLITS)[:3]
    async with PoolSet(size=2) as pools:
        artifacts = await asyncio.gather(*(replay(TASKPACK, t, [], pools) for t in tasks))
    with store.writer() as writer:
        episodes = [Episode(run="r", taskpack="terminal-coding", task_id=t.id, split=t.split, group_id=t.id,
                            sample_index=0, group_size=1, artifact_sha256=store.put_artifact(a))
                    for t, a in zip(tasks, artifacts, strict=True)]  # fmt: skip
        for episode in episodes:
            writer.add(episode)
    damaged = episodes[1]
    path = tmp_path / "run" / "artifacts" / damaged.artifact_sha256[:2] / f"{damaged.artifact_sha256}.zst"
    path.write_bytes(os.urandom(path.stat().st_size))

    for args in ([], ["--reverify"]):
        done = ptrain("verify", str(store.path), *args)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "2 verified" in done.stdout and "1 skipped" in done.stdout
        assert damaged.episode_id in done.stdout and "damaged" in done.stdout
        assert set(Store(store.path).latest_verdicts()) == {episodes[0].episode_id, episodes[2].episode_id}


def test_a_task_without_gold_is_not_counted_as_passed():
    from ptrain.taskpack import Task
    from ptrain.verify import CheckResult

    task = Task(id="t", instruction="p", category="c", difficulty="easy", split="test")
    assert CheckResult(task, None, 0.0).status == "no gold" and CheckResult(task, None, 0.0).ok
    assert CheckResult(task, 1.0, 0.0).status == "passed"
    assert CheckResult(task, 0.0, 0.0, "gold scored 0").status == "failed"
    assert CheckResult(task, None, 0.0, probes={"forged-report": 1.0}).status == "failed"


def test_a_failure_reason_is_pytests_short_summary_not_the_details_cut_at_300_characters():
    from ptrain.verify import failure_reason

    output = (
        '"""Subprocesses with accessible I/O streams\n'
        + "x" * 3000
        + (
            "\nE       assert 3 == 4\n=========================== short test summary info ==========\n"
            "FAILED tests/test_outputs.py::test_count - assert 3 == 4\n1 failed, 2 passed in 0.10s\n"
        )
    )
    reason = failure_reason({"exit_code": 1, "output": output, "failed": ["tests/test_outputs.py::test_count"]})
    assert reason == "FAILED tests/test_outputs.py::test_count - assert 3 == 4"
    assert failure_reason({"output": "E   AssertionError: no file\n"}) == "E   AssertionError: no file"
    assert failure_reason({"error": "hidden tests timed out after 60 s", "output": ""}).startswith("hidden tests")
    assert len(failure_reason({"x": "y" * 5000})) == 1200
