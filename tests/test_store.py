"""The trajectory store with real Parquet files, real writer processes and real SIGKILLs."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ptrain.cli.store import export_jsonl, export_parquet
from ptrain.episode import Episode, StoredVerdict
from ptrain.store import Store, StoreError, StoreWarning


def make_episode(task: int = 0, sample: int = 0, n_tokens: int = 300, group_size: int = 4, **overrides) -> Episode:
    """A small episode shaped like a real one: prompt, then model and tool turns."""
    rng = np.random.default_rng(task * 1000 + sample)
    mask = np.zeros(n_tokens, bool)
    for start in range(n_tokens // 3, n_tokens, 60):
        mask[start : start + 30] = True
    logprobs = np.where(mask, -rng.exponential(1.0, n_tokens), 0.0).astype(np.float32)
    fields = dict(
        run="run-1",
        taskpack="terminal-coding",
        taskpack_version="0.1.0",
        task_id=f"task-{task}",
        split="train",
        group_id=f"task-{task}@0",
        sample_index=sample,
        group_size=group_size,
        model="SmolLM2-135M-Instruct",
        policy_version=0,
        token_ids=rng.integers(0, 49152, n_tokens),
        loss_mask=mask,
        logprobs=logprobs,
        transcript=[
            {"role": "system", "content": "You are a careful engineer."},
            {"role": "user", "content": f"Fix task {task}."},
            {"role": "assistant", "content": "```bash\nls\n```"},
            {"role": "tool", "content": "README.md\nsrc\n"},
        ],
        tool_calls=[{"name": "bash", "arguments": {"command": "ls"}, "ok": True, "duration_s": 0.01}],
        timings={"total_s": 1.5, "engine_s": 1.0, "tools_s": 0.5},
        image_digest="sha256:" + "ab" * 32,
    )
    return Episode(**{**fields, **overrides})


def write(store: Store, episodes: list[Episode], flush_every: int = 1000) -> None:
    with store.writer(flush_every=flush_every) as writer:
        for episode in episodes:
            writer.add(episode)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "run", create=True)


# --- round trips ---------------------------------------------------------------------------------


def test_every_field_round_trips_and_logprobs_come_back_bit_for_bit(store: Store):
    logprobs = np.array([0.0, -0.0, -1e-45, -3.4e38, np.nan, -np.inf, -0.1, -1 / 3], np.float32)
    logprobs = np.concatenate([logprobs, np.random.default_rng(1).standard_normal(92).astype(np.float32)])
    episode = make_episode(
        n_tokens=100,
        logprobs=logprobs,
        status="error",
        error_type="SandboxError",
        error_message="container exited with 137",
        policy_version=7,
        artifact_sha256="0" * 64,
        metadata={"category": "git", "difficulty": 3, "nested": {"a": [1, 2.5, None]}},
        finished_at=1_700_000_000.123456,
    )
    write(store, [episode])
    [back] = list(Store(store.path).episodes())
    assert back == episode
    assert back.logprobs.view(np.uint32).tolist() == episode.logprobs.view(np.uint32).tolist()
    assert (back.token_ids.dtype, back.loss_mask.dtype, back.logprobs.dtype) == (np.int32, bool, np.float32)
    assert (back.prompt_tokens, back.model_tokens) == (episode.prompt_tokens, episode.model_tokens)


def test_empty_episode_round_trips(store: Store):
    episode = Episode(run="r", taskpack="tp", task_id="t", split="dev", group_id="g", sample_index=0, group_size=1,
                      status="timeout", error_type="TimeoutError")  # fmt: skip
    write(store, [episode])
    [back] = list(store.episodes())
    assert back == episode
    assert (back.num_tokens, back.prompt_tokens, back.model_tokens, back.tool_tokens) == (0, 0, 0, 0)


def test_hundred_thousand_token_episode_round_trips(store: Store):
    episode = make_episode(n_tokens=100_000)
    write(store, [episode, make_episode(sample=1)])
    assert {e.episode_id: e for e in store.episodes()}[episode.episode_id] == episode


def test_non_utf8_tool_output_round_trips_exactly(store: Store):
    raw = b"binary \xff\xfe\x80 output \x00 end"
    output = raw.decode("utf-8", "surrogateescape")
    episode = make_episode(
        transcript=[{"role": "tool", "content": output}, {"role": "assistant", "content": "héllo ✓"}],
        tool_calls=[{"name": "bash", "output": output}],
    )
    write(store, [episode])
    [back] = list(store.episodes())
    assert back == episode
    assert back.transcript[0]["content"].encode("utf-8", "surrogateescape") == raw
    assert back.transcript[1]["content"] == "héllo ✓"


def test_a_bad_episode_is_a_store_error_that_says_what_is_wrong():
    with pytest.raises(StoreError, match="loss_mask"):
        make_episode(n_tokens=10, loss_mask=np.ones(9, bool))
    with pytest.raises(StoreError, match="status"):
        make_episode(status="crashed")
    with pytest.raises(StoreError, match="error_type"):
        make_episode(status="error")
    with pytest.raises(StoreError, match="sample_index"):
        make_episode(sample=4, group_size=4)
    with pytest.raises(StoreError, match="reward"):
        StoredVerdict(episode_id="e", reward=1.5, passed=True)


def test_an_episode_that_is_not_json_is_refused_when_added(store: Store):
    with store.writer() as writer, pytest.raises(StoreError, match="not JSON"):
        writer.add(make_episode(tool_calls=[{"output": b"raw bytes"}]))


# --- the writer ----------------------------------------------------------------------------------


def test_writer_flushes_by_count_into_separate_shards(store: Store):
    write(store, [make_episode(sample=s, group_size=10) for s in range(10)], flush_every=4)
    assert [pq.read_metadata(p).num_rows for p in store.shards("episodes")] == [4, 4, 2]


def test_writer_flushes_by_time_without_further_calls(store: Store):
    writer = store.writer(flush_every=1000, flush_interval_s=0.2)
    writer.add(make_episode())
    for _ in range(100):
        if store.shards("episodes"):
            break
        time.sleep(0.1)
    assert len(list(store.episodes())) == 1
    writer.close()


def test_threads_sharing_one_writer_store_every_episode_once(store: Store):
    writer = store.writer(flush_every=7)

    def work(thread: int) -> None:
        for s in range(25):
            writer.add(make_episode(task=thread, sample=s, group_size=25, n_tokens=50))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    writer.close()
    pairs = [(e.task_id, e.sample_index) for e in store.episodes()]
    assert len(pairs) == len(set(pairs)) == 100


def test_stale_temp_file_of_a_dead_writer_is_never_read_and_is_swept(store: Store):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    host = socket.gethostname().replace("-", "_")
    stale = store.path / "episodes" / f".{host}-{dead.stdout.strip()}-abc.tmp"
    stale.write_bytes(b"PAR1 half a shard")
    assert list(store.episodes()) == []
    write(store, [make_episode()])
    assert not stale.exists()
    assert len(list(store.episodes())) == 1


# --- crashes and concurrency ---------------------------------------------------------------------

WRITER = """
import sys, time
import numpy as np
from ptrain.episode import Episode
from ptrain.store import Store

run, first_task, tasks, group_size, flush_every = sys.argv[1], *map(int, sys.argv[2:6])
pause_s = float(sys.argv[6])
store = Store(run, create=True)
done = store.done()
writer = store.writer(flush_every=10**9, flush_interval_s=3600)
batch = []
print("ready", flush=True)
for task in range(first_task, first_task + tasks):
    for sample in range(group_size):
        if (f"task-{task}", sample) in done:
            continue
        n = 200 + 37 * sample
        episode = Episode(run="r", taskpack="tp", task_id=f"task-{task}", split="train", group_id=f"g{task}",
                          sample_index=sample, group_size=group_size, token_ids=np.arange(n) % 49152,
                          loss_mask=np.arange(n) % 2, logprobs=-np.arange(n, dtype=np.float32) / n,
                          transcript=[{"role": "tool", "content": "x" * n}])
        writer.add(episode)
        batch.append(episode.episode_id)
        time.sleep(pause_s)
        if len(batch) == flush_every:
            writer.flush()
            print("flushed", *batch, flush=True)
            batch = []
writer.close()
print("flushed", *batch, flush=True)
print("finished", flush=True)
"""


def start_writer(run: Path, first_task: int, tasks: int, group_size: int, flush_every: int, pause_s: float = 0.0):
    args = [sys.executable, "-c", WRITER, str(run), *map(str, (first_task, tasks, group_size, flush_every, pause_s))]
    return subprocess.Popen(args, stdout=subprocess.PIPE, text=True)


def flushed_ids(lines: list[str]) -> set[str]:
    return {i for line in lines if line.startswith("flushed") for i in line.split()[1:]}


def test_killed_writer_leaves_only_whole_shards_and_a_resumed_run_writes_each_pair_once(tmp_path: Path):
    run, rng = tmp_path / "run", random.Random(3)
    flushed: set[str] = set()
    kills = 0
    for _ in range(12):  # each round commits at most ~50 of the 800 episodes, so every round is killed mid-run
        writer = start_writer(run, 0, 100, 8, flush_every=5, pause_s=0.001)
        lines = [writer.stdout.readline()]
        for _ in range(rng.randrange(4)):  # let it flush a few times, then kill it at a random moment
            lines.append(writer.stdout.readline())
        time.sleep(rng.uniform(0, 0.03))
        writer.send_signal(signal.SIGKILL)
        lines += writer.communicate()[0].splitlines()
        kills += writer.returncode == -signal.SIGKILL
        flushed |= flushed_ids(lines)
    writer = start_writer(run, 0, 100, 8, flush_every=5)
    lines = writer.communicate()[0].splitlines()
    assert lines[-1] == "finished"
    flushed |= flushed_ids(lines)

    assert kills == 12
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreWarning)  # no partial shard was ever visible
        store = Store(run)
        episodes = list(store.episodes())
    ids = {e.episode_id for e in episodes}
    assert flushed <= ids
    pairs = [(e.task_id, e.sample_index) for e in episodes]
    assert len(pairs) == len(set(pairs)) == 800
    assert store.quarantined == []
    assert not list((run / "episodes").glob(".*.tmp"))  # the last writer swept what the killed ones left


def test_four_writer_processes_at_once_store_every_episode_exactly_once(tmp_path: Path):
    run = tmp_path / "run"
    writers = [start_writer(run, first_task=10 * w, tasks=10, group_size=5, flush_every=6) for w in range(4)]
    outputs = [w.communicate()[0].splitlines() for w in writers]
    assert all(lines[-1] == "finished" for lines in outputs)
    store = Store(run)
    episodes = list(store.episodes())
    assert len(episodes) == len({e.episode_id for e in episodes}) == 200
    assert {(e.task_id, e.sample_index) for e in episodes} == {(f"task-{t}", s) for t in range(40) for s in range(5)}
    assert len(store.shards("episodes")) == 4 * 9
    assert len(list(store.groups())) == 40


# --- damage --------------------------------------------------------------------------------------


def four_shards(store: Store) -> list[Path]:
    with store.writer() as writer:
        for task in range(4):
            for sample in range(4):
                writer.add(make_episode(task=task, sample=sample))
            writer.flush()
    return store.shards("episodes")


def test_truncated_garbage_and_empty_shards_are_named_quarantined_and_the_rest_stays_readable(store: Store):
    truncated, garbage, good, also_good = four_shards(store)
    truncated.write_bytes(truncated.read_bytes()[: truncated.stat().st_size // 2])
    garbage.write_bytes(os.urandom(garbage.stat().st_size))
    empty = store.path / "episodes" / "zz-empty.parquet"
    empty.touch()

    reader = Store(store.path)
    with pytest.warns(StoreWarning) as warned:
        episodes = list(reader.episodes())
    messages = "\n".join(str(w.message) for w in warned)
    for damaged in (truncated, garbage, empty):
        assert str(damaged) in messages
        assert not damaged.exists()
        assert (store.path / "quarantine" / "episodes" / damaged.name).exists()
    assert {e.task_id for e in episodes} == {"task-2", "task-3"} and len(episodes) == 8
    assert sorted(q.original.name for q in reader.quarantined) == sorted(p.name for p in (truncated, garbage, empty))
    assert reader.disk_usage()["quarantine"][0] == 3
    assert reader.done() == {(f"task-{t}", s) for t in (2, 3) for s in range(4)}  # a resumed stage redoes the rest


def test_a_corrupted_page_inside_a_shard_is_caught_by_its_checksum(store: Store):
    shards = four_shards(store)
    damaged = shards[1]
    data = bytearray(damaged.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(b ^ 0xFF for b in data[middle : middle + 64])
    damaged.write_bytes(bytes(data))
    with pytest.warns(StoreWarning, match=damaged.name):
        episodes = list(Store(store.path).episodes())
    assert len(episodes) == 12 and "task-1" not in {e.task_id for e in episodes}


def test_a_shard_from_a_newer_schema_is_a_clear_error(store: Store):
    write(store, [make_episode()])
    newer = store.path / "episodes" / "newer.parquet"
    table = pa.table({"x": [1]}).replace_schema_metadata({"ptrain.schema_version": "99", "ptrain.table": "episodes"})
    pq.write_table(table, newer)
    with pytest.raises(StoreError, match="schema 99") as error:
        list(Store(store.path).episodes())
    assert str(newer) in str(error.value) and "upgrade" in str(error.value)
    assert newer.exists()


def test_opening_a_directory_that_is_not_a_run_is_a_clear_error(tmp_path: Path):
    with pytest.raises(StoreError, match="not a ptrain run directory"):
        Store(tmp_path / "nowhere")


# --- verdicts, queries, groups, resume -----------------------------------------------------------


def test_reverifying_appends_and_readers_see_the_latest_verdict(store: Store):
    episode = make_episode()
    write(store, [episode])
    shards_before = {p: p.stat().st_mtime_ns for p in store.shards("episodes")}
    with store.writer() as writer:
        writer.add_verdict(StoredVerdict(episode_id=episode.episode_id, reward=0.0, passed=False, verified_at=1.0))
    with store.writer() as writer:
        writer.add_verdict(
            StoredVerdict(
                episode_id=episode.episode_id,
                reward=1.0,
                passed=True,
                verifier_version="v2",
                verified_at=2.0,
                details={"tests": {"passed": 3, "failed": 0}},
            )  # fmt: skip
        )
        writer.add_verdict(StoredVerdict(episode_id=episode.episode_id, reward=0.5, passed=False, verified_at=1.5))
    latest = store.latest_verdicts()[episode.episode_id]
    assert (latest.reward, latest.verifier_version, latest.details) == (
        1.0,
        "v2",
        {"tests": {"passed": 3, "failed": 0}},
    )
    assert {p: p.stat().st_mtime_ns for p in store.shards("episodes")} == shards_before
    assert len(store.shards("verdicts")) == 2


def test_episodes_filter_by_split_task_status_policy_version_and_reward(store: Store):
    episodes = [
        make_episode(task=0, sample=0, split="train", policy_version=1),
        make_episode(task=0, sample=1, split="train", policy_version=2, status="truncated"),
        make_episode(task=1, sample=0, split="test", policy_version=2),
        make_episode(task=1, sample=1, split="test", policy_version=3, status="error", error_type="ToolError"),
    ]
    write(store, episodes)
    with store.writer() as writer:
        for episode, reward in zip(episodes[:3], (1.0, 0.25, 0.0), strict=True):
            writer.add_verdict(StoredVerdict(episode_id=episode.episode_id, reward=reward, passed=reward == 1.0))

    def ids(**filters) -> set[int]:
        found = {e.episode_id for e in store.episodes(**filters)}
        return {i for i, e in enumerate(episodes) if e.episode_id in found}

    assert ids() == {0, 1, 2, 3}
    assert ids(split="test") == {2, 3}
    assert ids(task_id=["task-0"]) == {0, 1}
    assert ids(status=("ok", "truncated")) == {0, 1, 2}
    assert ids(min_policy_version=2, max_policy_version=2) == {1, 2}
    assert ids(min_reward=0.25) == {0, 1}
    assert ids(max_reward=0.5, split="train") == {1}
    with pytest.raises(StoreError, match="unknown status"):
        ids(status="OK")


def test_groups_are_complete_in_sample_order_across_shards_with_their_verdicts(store: Store):
    order = [(0, 2), (1, 0), (0, 0), (2, 1), (1, 1), (0, 1), (2, 0), (3, 0), (1, 2)]  # (task, sample) as they finished
    episodes = {(t, s): make_episode(task=t, sample=s, group_size=3 if t != 2 else 2) for t, s in order}
    write(store, [episodes[k] for k in order], flush_every=2)
    with store.writer() as writer:
        for (t, s), episode in episodes.items():
            if t == 0:
                writer.add_verdict(StoredVerdict(episode_id=episode.episode_id, reward=s / 2, passed=s == 2))
    write(store, [make_episode(task=0, sample=1, group_size=3)])

    with pytest.warns(StoreWarning, match="repeat"):  # a duplicate (group, sample) is reported, the first one used
        groups = list(store.groups())
    assert [g.group_id for g in groups] == ["task-0@0", "task-2@0", "task-1@0"]  # as soon as each is complete
    for group in groups:
        assert [e.sample_index for e in group.episodes] == list(range(len(group.episodes)))
        assert all(e == episodes[(int(group.task_id.split("-")[1]), e.sample_index)] for e in group.episodes)
    assert groups[0].rewards.tolist() == [0.0, 0.5, 1.0]
    assert np.isnan(groups[1].rewards).all()
    with pytest.warns(StoreWarning, match="repeat"):
        partial = {g.group_id: len(g.episodes) for g in store.groups(include_incomplete=True)}
    assert partial == {"task-0@0": 3, "task-1@0": 3, "task-2@0": 2, "task-3@0": 1}
    assert [g.group_id for g in store.groups(task_id="task-1")] == ["task-1@0"]
    with pytest.raises(StoreError, match="whole"):
        list(store.groups(status="ok"))


def test_done_reports_the_task_sample_pairs_a_resumed_stage_skips(store: Store):
    write(store, [make_episode(task=t, sample=s, split="train" if t else "dev") for t in range(2) for s in range(3)])
    assert store.done() == {(f"task-{t}", s) for t in range(2) for s in range(3)}
    assert store.done(split="dev") == {("task-0", s) for s in range(3)}


# --- artifacts and exports -----------------------------------------------------------------------


def test_artifacts_are_content_addressed_deduplicated_and_checked_when_read(store: Store):
    tar = os.urandom(1000) + b"workspace" * 10_000
    digest = store.put_artifact(tar)
    assert store.put_artifact(tar) == digest
    assert store.artifact(digest) == tar
    files = [p for p in (store.path / "artifacts").rglob("*") if p.is_file()]
    assert len(files) == 1 and files[0].stat().st_size < len(tar) // 10
    write(store, [make_episode(artifact_sha256=digest)])
    assert store.artifact(next(store.episodes()).artifact_sha256) == tar
    files[0].write_bytes(b"not zstd")
    with pytest.raises(StoreError, match="damaged"):
        store.artifact(digest)
    with pytest.raises(StoreError, match="no artifact"):
        store.artifact("f" * 64)


def test_export_jsonl_is_chat_format_for_sft(store: Store, tmp_path: Path):
    episodes = [make_episode(sample=s) for s in range(3)]
    episodes.append(
        make_episode(sample=3, transcript=[{"role": "tool", "content": b"\xff".decode("utf-8", "surrogateescape")}])
    )
    write(store, episodes)
    with store.writer() as writer:
        writer.add_verdict(StoredVerdict(episode_id=episodes[0].episode_id, reward=1.0, passed=True))
    out = tmp_path / "sft.jsonl"
    assert export_jsonl(store, out, min_reward=1.0) == 1
    [row] = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["messages"] == episodes[0].transcript and row["reward"] == 1.0
    assert export_jsonl(store, out) == 4
    assert json.loads(out.read_text().splitlines()[3])["messages"][0]["content"] == "\ufffd"


def test_export_parquet_and_the_store_itself_load_with_datasets(store: Store, tmp_path: Path):
    datasets = pytest.importorskip("datasets")
    episodes = [make_episode(sample=s) for s in range(4)] + [make_episode(task=1, n_tokens=0, status="timeout")]
    write(store, episodes, flush_every=3)
    with store.writer() as writer:
        writer.add_verdict(StoredVerdict(episode_id=episodes[1].episode_id, reward=0.5, passed=False))
    out = tmp_path / "export.parquet"
    assert export_parquet(store, out) == 5
    exported = datasets.load_dataset("parquet", data_files=str(out), cache_dir=str(tmp_path / "hf"))["train"]
    rows = {row["episode_id"]: row for row in exported}
    assert rows[episodes[1].episode_id]["reward"] == 0.5 and rows[episodes[0].episode_id]["reward"] is None
    assert rows[episodes[0].episode_id]["messages"][1] == {"role": "user", "content": "Fix task 0."}
    assert rows[episodes[2].episode_id]["token_ids"] == episodes[2].token_ids.tolist()

    raw = datasets.load_dataset(
        "parquet", data_files=str(store.path / "episodes" / "*.parquet"), cache_dir=str(tmp_path / "hf")
    )["train"]
    assert sorted(raw["episode_id"]) == sorted(e.episode_id for e in episodes)
    frame = pq.read_table(store.path / "episodes").to_pandas()
    assert len(frame) == 5
