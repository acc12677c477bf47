"""Benchmark: the trajectory store against gzip'd JSONL, written and read in the same run.

Synthetic episodes shaped like real agent rollouts: a shared system prompt (400 tokens) and a task
instruction shared by the 8 samples of a group, then alternating model turns (mask 1, float32
logprobs) and tool outputs (mask 0), about 2,200 tokens in all. The text is real code (this Python's
stdlib and site-packages) cut into ~3.6-character pieces by a stand-in tokenizer, so token ids
repeat the way real ones do and the transcript is the same text as the tokens. Only the prompt is
shared between episodes: model turns and tool outputs come from random places in the corpus, so
neither format gets unrealistic repeats. Episodes of 32 groups finish interleaved, as under the
async scheduler.

The JSONL baseline is what one would write by hand: one `json.dumps` line per episode (arrays as
lists, logprobs as Python floats, which round-trip float32 exactly), gzip level 6, read back into the
same `Episode` objects. Both sides are timed on the same episodes; generating them is not timed.
Group streaming and its peak RSS are measured in fresh processes.

    python scripts/bench_store.py                   # 100,000 episodes (about 10 minutes on 2 cores)
    python scripts/bench_store.py --episodes 2000   # a quick look
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import zlib
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from ptrain.episode import Episode, Group
from ptrain.store import Store

GROUP_SIZE = 8
GROUPS_IN_FLIGHT = 32
VOCAB = 49152  # SmolLM2's
PIECE = re.compile(r" ?\w{1,5}|\s+|[^\w\s]{1,3}")


class Corpus:
    """Real code text, tokenized lazily into (token ids, text) slices by a stand-in tokenizer."""

    def __init__(self, max_mb: int):
        texts, size = [], 0
        for key in ("stdlib", "purelib"):
            for path in sorted(Path(sysconfig.get_paths()[key]).rglob("*.py")):
                try:
                    text = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                texts.append(text)
                size += len(text)
                if size > max_mb << 20:
                    break
            if size > max_mb << 20:
                break
        self.text = "".join(texts)
        self.ids: dict[str, int] = {}
        self.prompts: dict[tuple[int, int], tuple[np.ndarray, str]] = {}

    def prompt(self, start: int, n_tokens: int) -> tuple[np.ndarray, str]:
        """A slice that many episodes share (the system prompt, a task's instruction)."""
        if (start, n_tokens) not in self.prompts:
            self.prompts[start, n_tokens] = self.slice(start, n_tokens)
        return self.prompts[start, n_tokens]

    def slice(self, start: int, n_tokens: int) -> tuple[np.ndarray, str]:
        start %= len(self.text) - 6 * n_tokens
        pieces = PIECE.findall(self.text, start, start + 4 * n_tokens + 64)[:n_tokens]
        ids = self.ids
        tokens = [ids.get(p) or ids.setdefault(p, zlib.crc32(p.encode()) % VOCAB) for p in pieces]
        return np.array(tokens, np.int32), "".join(pieces)


def episode(corpus: Corpus, index: int, group: int, sample: int) -> Episode:
    rng = np.random.default_rng([index, 7])
    task = group // 4  # each task is rolled out in several groups (policy versions)
    system = corpus.prompt(0, 400)
    instruction = corpus.prompt(1 + task * 7919 * 64, int(np.random.default_rng(task).integers(80, 250)))
    segments = [(system, 0, "system"), (instruction, 0, "user")]
    target = int(np.clip(rng.normal(2200, 600), 600, 4000))
    total = len(system[0]) + len(instruction[0])
    while total < target:
        for mask, low, high, role in ((1, 30, 250, "assistant"), (0, 40, 400, "tool")):
            seg = corpus.slice(int(rng.integers(0, 1 << 40)), int(rng.integers(low, high)))
            segments.append((seg, mask, role))
            total += len(seg[0])
    tokens = np.concatenate([s[0] for s, _, _ in segments])
    mask = np.concatenate([np.full(len(s[0]), m, bool) for s, m, _ in segments])
    logprobs = np.zeros(len(tokens), np.float32)
    n = int(mask.sum())
    confident = rng.random(n) < 0.6
    logprobs[mask] = np.where(confident, -np.exp(rng.normal(-7, 2, n)), -rng.exponential(1.5, n)).astype(np.float32)
    transcript = [{"role": role, "content": s[1]} for s, _, role in segments]
    calls = [
        {"name": "bash", "arguments": {"command": m["content"][:80]}, "ok": bool(rng.random() < 0.9),
         "duration_s": round(float(rng.exponential(0.3)), 4)}
        for m in transcript if m["role"] == "assistant"
    ]  # fmt: skip
    status = str(rng.choice(["ok", "truncated", "timeout", "error"], p=[0.85, 0.1, 0.03, 0.02]))
    return Episode(
        run="bench", taskpack="terminal-coding", taskpack_version="0.1.0", task_id=f"task-{task:05d}",
        split="train", group_id=f"g{group:06d}", sample_index=sample, group_size=GROUP_SIZE,
        model="SmolLM2-135M-Instruct", policy_version=group // 1000, token_ids=tokens, loss_mask=mask,
        logprobs=logprobs, transcript=transcript, tool_calls=calls, status=status,
        error_type="SandboxError" if status == "error" else "", error_message="exit 137" if status == "error" else "",
        timings={"total_s": float(rng.exponential(20)), "engine_s": float(rng.exponential(10))},
        image_digest="sha256:" + "3f" * 32, artifact_sha256=hashlib.sha256(str(index).encode()).hexdigest(),
        metadata={"category": ["git", "python", "shell"][task % 3], "difficulty": task % 5},
        episode_id=f"{index:08x}" + "0" * 24, finished_at=1.7e9 + index,
    )  # fmt: skip


def synthetic(corpus: Corpus, n: int) -> Iterator[Episode]:
    """Episodes in the order they would finish: groups in waves of GROUPS_IN_FLIGHT, interleaved."""
    wave = GROUP_SIZE * GROUPS_IN_FLIGHT
    index = 0
    for first in range(0, n, wave):
        slots = [(g, s) for g in range(first // GROUP_SIZE, (first + wave) // GROUP_SIZE) for s in range(GROUP_SIZE)]
        for k in np.random.default_rng(first).permutation(len(slots)):
            if index < n and slots[k][0] * GROUP_SIZE < n:
                yield episode(corpus, index, *slots[k])
                index += 1


def to_json(e: Episode) -> str:
    record = {
        "episode_id": e.episode_id, "run": e.run, "taskpack": e.taskpack, "taskpack_version": e.taskpack_version,
        "task_id": e.task_id, "split": e.split, "group_id": e.group_id, "sample_index": e.sample_index,
        "group_size": e.group_size, "model": e.model, "policy_version": e.policy_version,
        "token_ids": e.token_ids.tolist(), "loss_mask": e.loss_mask.astype(np.uint8).tolist(),
        "logprobs": e.logprobs.tolist(), "transcript": e.transcript, "tool_calls": e.tool_calls,
        "status": e.status, "error_type": e.error_type, "error_message": e.error_message,
        "timings": e.timings, "image_digest": e.image_digest, "artifact_sha256": e.artifact_sha256,
        "metadata": e.metadata, "finished_at": e.finished_at,
    }  # fmt: skip
    return json.dumps(record, ensure_ascii=False)


def read_jsonl(path: Path) -> Iterator[Episode]:
    with gzip.open(path, "rb") as f:
        for line in f:
            yield Episode(**json.loads(line))


def jsonl_groups(path: Path) -> Iterator[list[Episode]]:
    """Streaming groups from JSONL: buffer each group until all its samples have been read."""
    pending: dict[str, list[Episode]] = {}
    for e in read_jsonl(path):
        members = pending.setdefault(e.group_id, [])
        members.append(e)
        if len(members) == e.group_size:
            yield sorted(pending.pop(e.group_id), key=lambda x: x.sample_index)


def fold(h, episodes: list[Episode]) -> None:
    for e in episodes:
        for array in (e.token_ids, e.loss_mask, e.logprobs):
            h.update(array.tobytes())
        h.update(json.dumps(e.transcript).encode())


def digest(episodes: Iterator[Episode]) -> str:
    h = hashlib.blake2b()
    fold(h, episodes)
    return h.hexdigest()


def peak_rss_mb() -> float:
    """This process's own peak (VmHWM; ru_maxrss would include the parent's peak from before exec)."""
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024


def count_episodes(items: Iterator[Episode | Group | list[Episode]]) -> int:
    return sum(len(x.episodes) if isinstance(x, Group) else len(x) if isinstance(x, list) else 1 for x in items)


def race(ours: Iterator, theirs: Iterator, step: int) -> tuple[float, float, int, int]:
    """Pull `step` items from each in turn, timing each side alone, so that load from other work on a
    shared machine falls on both alike. Returns (our seconds, their seconds, our episodes, theirs)."""
    seconds, counts = [0.0, 0.0], [0, 0]
    live = [ours, theirs]
    while any(live):
        for side, items in enumerate(live):
            if items is None:
                continue
            start = time.perf_counter()
            chunk = list(islice(items, step))
            seconds[side] += time.perf_counter() - start
            counts[side] += count_episodes(chunk)
            if len(chunk) < step:
                live[side] = None
    return seconds[0], seconds[1], counts[0], counts[1]


def stream_groups(path: Path) -> None:
    """Run in a fresh process: stream every group from the store and report this process's peak RSS."""
    episodes = count_episodes(Store(path).groups())
    print(json.dumps({"episodes": episodes, "peak_rss_mb": peak_rss_mb()}))


def measure_rss(path: Path) -> dict:
    out = subprocess.run([sys.executable, __file__, "--stream-groups", str(path)], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.splitlines()[-1])


def column_bytes(paths: list[Path]) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for path in paths:
        meta = pq.read_metadata(path)
        for rg in range(meta.num_row_groups):
            for c in range(meta.num_columns):
                column = meta.row_group(rg).column(c)
                name = column.path_in_schema.split(".")[0]
                sizes[name] = sizes.get(name, 0) + column.total_compressed_size
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--dir", type=Path, default=None, help="work directory (default: a temp dir, removed after)")
    parser.add_argument("--corpus-mb", type=int, default=128, help="how much real code to cut episodes from")
    parser.add_argument("--stream-groups", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stream_groups:
        return stream_groups(args.stream_groups)

    n = args.episodes - args.episodes % GROUP_SIZE  # whole groups only
    work = args.dir or Path(tempfile.mkdtemp(prefix="bench_store_"))
    run, jsonl = work / "run", work / "episodes.jsonl.gz"
    shutil.rmtree(run, ignore_errors=True)
    corpus = Corpus(args.corpus_mb)
    print(f"{n} synthetic episodes from {len(corpus.text) >> 20} MB of code, work dir {work}", flush=True)

    # write the same episodes to both, chunk by chunk, alternating; only the writing is timed
    timed = {"store": 0.0, "jsonl": 0.0, "generate": 0.0}
    tokens = model_tokens = 0
    written = hashlib.blake2b()
    writer = Store(run, create=True).writer()
    with gzip.open(jsonl, "wb", compresslevel=6) as out:
        episodes = synthetic(corpus, n)
        while True:
            start = time.perf_counter()
            chunk = list(islice(episodes, 512))
            timed["generate"] += time.perf_counter() - start
            if not chunk:
                break
            start = time.perf_counter()
            for e in chunk:
                writer.add(e)
            timed["store"] += time.perf_counter() - start
            start = time.perf_counter()
            for e in chunk:
                out.write(to_json(e).encode() + b"\n")
            timed["jsonl"] += time.perf_counter() - start
            tokens += sum(e.num_tokens for e in chunk)
            model_tokens += sum(e.model_tokens for e in chunk)
            fold(written, chunk)
        start = time.perf_counter()
    timed["jsonl"] += time.perf_counter() - start  # the gzip trailer
    start = time.perf_counter()
    writer.close()
    timed["store"] += time.perf_counter() - start
    print(f"written ({timed['generate']:.0f} s generating, untimed): {tokens / n:.0f} tokens per episode, "
          f"{model_tokens / tokens:.0%} model tokens", flush=True)  # fmt: skip

    store = Store(run)
    r_store, r_jsonl, count, count_jsonl = race(store.episodes(), read_jsonl(jsonl), 512)
    assert count == count_jsonl == n, (count, count_jsonl, n)
    print("full read done", flush=True)
    g_store, g_jsonl, count, count_jsonl = race(store.groups(), jsonl_groups(jsonl), 64)
    assert count == count_jsonl == n, (count, count_jsonl, n)
    print("group read done", flush=True)
    bit_for_bit = digest(store.episodes()) == written.hexdigest()
    rss = measure_rss(run)
    shards = store.shards("episodes")
    size_store, size_jsonl = sum(p.stat().st_size for p in shards), jsonl.stat().st_size

    print(f"\n{'':28}{'store':>12}{'jsonl.gz':>12}{'ratio':>9}")
    for name, ours, theirs in [
        ("write (episodes/s)", n / timed["store"], n / timed["jsonl"]),
        ("full read (episodes/s)", n / r_store, n / r_jsonl),
        ("group read (episodes/s)", n / g_store, n / g_jsonl),
        ("bytes on disk (MB)", size_store / 1e6, size_jsonl / 1e6),
        ("bytes per episode", size_store / n, size_jsonl / n),
    ]:
        ratio = theirs / ours if name.startswith("bytes") else ours / theirs
        print(f"{name:28}{ours:12.1f}{theirs:12.1f}{ratio:8.1f}x")
    print(
        f"{'peak RSS, streaming groups':28}{rss['peak_rss_mb']:9.0f} MB  (a fresh process, {rss['episodes']} episodes)"
    )
    print(f"\ntoken ids, masks, logprobs and transcripts bit for bit after the round trip: {bit_for_bit}")
    by_column = sorted(column_bytes(shards).items(), key=lambda kv: -kv[1])
    print(f"{len(shards)} shards; bytes per episode by column: "
          + ", ".join(f"{k} {v / n:.0f}" for k, v in by_column if v / n >= 1))  # fmt: skip
    if args.dir is None:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
