"""`ptrain rollout` end to end: the real default model, real sandboxes, a real store; killed with
SIGKILL mid-run and run again, every (task, sample) ends up stored exactly once."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from ptrain.sandbox import runtime
from ptrain.store import Store

pytestmark = [pytest.mark.slow, pytest.mark.podman]
TASKS = ("text/count-lines", "files-shell/create-hello", "text/first-line")
SAMPLES = 2


def rollout_command(run, config):
    ptrain = os.path.join(os.path.dirname(sys.executable), "ptrain")
    return [ptrain, "rollout", str(run), "--config", str(config), "--task-ids", ",".join(TASKS),
            "--samples", str(SAMPLES), "--concurrency", "2", "--max-turns", "2", "--max-new-tokens", "48"]  # fmt: skip


def settled(list_containers, quiet_s: float = 3.0, timeout_s: float = 60.0) -> list:
    """The containers once the service has finished what the killed process asked of it (a create or a
    removal under way goes on after its client dies): the same set for `quiet_s`."""
    deadline = time.monotonic() + timeout_s
    containers = list_containers()
    while time.monotonic() < deadline:
        time.sleep(quiet_s)
        again = list_containers()
        if {c.id for c in again} == {c.id for c in containers}:
            return again
        containers = again
    return containers


def test_a_killed_rollout_run_again_stores_every_episode_exactly_once(tmp_path, podman_url, model_path):
    config = tmp_path / "rollout.toml"
    config.write_text("flush_every = 1\nflush_interval_s = 0.5\nverify_concurrency = 1\n")
    run = tmp_path / "run"
    command = rollout_command(run, config)
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and first.poll() is None:
        if (run / "episodes").is_dir() and any((run / "episodes").glob("*.parquet")):
            break
        time.sleep(0.1)
    first.send_signal(signal.SIGKILL)
    first.wait()
    partial = Store(run).done()
    assert 0 < len(partial) < len(TASKS) * SAMPLES, "the first run should be killed part way"
    owner = f"{runtime.LABEL}.owner={runtime.owner_label(first.pid)}"

    def owned() -> list:
        return runtime.client(podman_url).containers.list(all=True, filters={"label": owner})

    leftovers = settled(owned)
    assert leftovers, "the killed run's sandboxes should still be there"

    second = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "planned" in second.stdout
    removed = re.search(r"removed (\d+) containers left by killed ptrain processes", second.stderr)
    assert removed and int(removed[1]) >= len(leftovers)
    assert not owned()
    store = Store(run)
    pairs = sorted((e.task_id, e.sample_index) for e in store.episodes())
    assert pairs == sorted((t, i) for t in TASKS for i in range(SAMPLES))
    episodes = list(store.episodes())
    assert all(e.status in ("ok", "truncated") and e.model_tokens > 0 and e.model == "smollm2-135m" for e in episodes)
    for e in episodes:  # behaviour logprobs on model tokens, none elsewhere
        assert (e.logprobs[e.loss_mask] < 0).any() and not e.logprobs[~e.loss_mask].any()
    assert set(store.latest_verdicts()) == {e.episode_id for e in episodes}  # the killed run's too
    assert len(list(store.groups())) == len(TASKS)
    assert list((run / "metrics").glob("rollout-*.jsonl"))
