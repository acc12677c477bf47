"""The trajectory store: one run directory of immutable Parquet shards that every stage reads and writes.

    RUN/episodes/    one zstd Parquet shard per writer flush: <utc time>-<host>-<pid>-<token>-<seq>.parquet
    RUN/verdicts/    verdicts, in shards named the same way; re-verifying appends, readers take the latest
    RUN/artifacts/   large per-episode blobs (workspace tars) by content: ab/<sha256>.zst, each stored once
    RUN/quarantine/  shards that could not be read, moved aside with a warning that names them

Why this shape:
- Crash safety without locks. A flush writes its shard under a dot-name in the same folder, fsyncs
  it, renames it and fsyncs the folder: readers only ever see whole shards, and a crash loses at
  most a writer's unflushed buffer (flushed by count and by time). Shard names carry host, pid, a
  random token and a sequence number, so any number of writers (threads, processes, machines on a
  shared filesystem) never share a file.
- Independent stages. Verdicts are their own table: re-verifying appends and never rewrites an
  episode. `done()` tells a restarted stage which (task, sample) pairs exist, so it neither repeats
  nor loses work. `groups()` streams complete GRPO groups to the trainer in bounded memory.
- Small and fast. Each column gets the encoding that suits it (measured by scripts/bench_store.py):
  dictionaries for repeated strings, plain int32 token ids (zstd finds the repeated runs),
  byte-stream-split float32 logprobs (bit for bit), run-length booleans for the mask, JSON text.
- Plain files. Any Parquet reader (pyarrow, pandas, DuckDB, `datasets`) reads the shards. Every
  footer carries `ptrain.schema_version`; a shard from a newer schema is an error, not a misreading.
- Visible damage. A shard that cannot be read (pages carry checksums) is moved to quarantine/ with a
  `StoreWarning` naming it and recorded in `Store.quarantined`; everything else stays readable.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import math
import os
import re
import secrets
import socket
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ptrain.errors import PtrainError

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
STATUSES = ("ok", "truncated", "timeout", "error")


class StoreError(PtrainError):
    """The run directory cannot be read or written as asked."""


class StoreWarning(UserWarning):
    """Something in the run directory was set aside (a damaged shard); the rest stays readable."""


def _array(values: Any, dtype: type, name: str, n: int | None = None) -> np.ndarray:
    """A read-only copy of `values` as a flat array of `dtype` (and length n); lossy casts refused."""
    source = np.asarray(values)
    array = source.astype(dtype).reshape(-1) if source.size else np.zeros(0, dtype)
    lossless = dtype is np.float32 or not source.size or np.array_equal(array, source)  # float64 rounds
    if (source.size and source.ndim != 1) or not lossless or (n is not None and len(array) != n):
        want = f"{n} " if n is not None else ""
        raise StoreError(f"{name} must be {want}{np.dtype(dtype).name} values, got {source.dtype} {source.shape}")
    array.flags.writeable = False
    return array


@dataclass(frozen=True, eq=False, kw_only=True)
class Episode:
    """One rollout of one task, token-in token-out, as the rollout stage produced it.

    `token_ids` is the whole sequence (prompt, model turns, tool outputs); `loss_mask` is 1 on model
    tokens; `logprobs` are the behaviour (sampling) logprobs, float32, one per token (0 where not
    sampled). `transcript` (chat messages) and `tool_calls` (one record per call) are JSON values;
    decode non-UTF-8 tool output with errors="surrogateescape" and it round-trips exactly. `status`
    is one of STATUSES, and a failed episode names its error type (e.g. "SandboxError") so that
    infrastructure failures are never trained on as the model's. `group_id` must be the same when a
    stage resumes (derive it from the task and policy version), or the group never completes.
    """

    run: str
    taskpack: str
    task_id: str
    split: str
    group_id: str
    sample_index: int
    group_size: int
    token_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    loss_mask: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    logprobs: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    transcript: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    status: str = "ok"
    error_type: str = ""
    error_message: str = ""
    taskpack_version: str = ""
    model: str = ""
    policy_version: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    image_digest: str = ""
    artifact_sha256: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    episode_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    finished_at: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        tokens = _array(self.token_ids, np.int32, "token_ids")
        object.__setattr__(self, "token_ids", tokens)
        object.__setattr__(self, "loss_mask", _array(self.loss_mask, bool, "loss_mask (0/1)", len(tokens)))
        object.__setattr__(self, "logprobs", _array(self.logprobs, np.float32, "logprobs", len(tokens)))
        if self.status not in STATUSES:
            raise StoreError(f"episode status {self.status!r} is not one of {STATUSES}")
        if self.status == "error" and not self.error_type:
            raise StoreError("an episode with status 'error' needs an error_type (e.g. 'SandboxError')")
        if not 0 <= self.sample_index < self.group_size:
            raise StoreError(f"sample_index {self.sample_index} is outside its group of {self.group_size}")
        if self.artifact_sha256 and not re.fullmatch(r"[0-9a-f]{64}", self.artifact_sha256):
            raise StoreError(f"artifact_sha256 {self.artifact_sha256!r} is not a sha256 hex digest")

    @property
    def num_tokens(self) -> int:
        return len(self.token_ids)

    @property
    def model_tokens(self) -> int:
        return int(self.loss_mask.sum())

    @property
    def prompt_tokens(self) -> int:
        """The tokens before the model's first one."""
        return int(np.argmax(self.loss_mask)) if self.loss_mask.any() else self.num_tokens

    @property
    def tool_tokens(self) -> int:
        return self.num_tokens - self.prompt_tokens - self.model_tokens

    def __eq__(self, other: object) -> bool:
        """Field by field; arrays by value, logprobs bit for bit (NaN payloads included)."""
        if not isinstance(other, Episode):
            return NotImplemented
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if isinstance(a, np.ndarray):
                a, b = (a.view(np.uint32), b.view(np.uint32)) if a.dtype == np.float32 else (a, b)
                if not np.array_equal(a, b):
                    return False
            elif a != b:
                return False
        return True


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """A verifier's score for one episode; a later verdict for the same episode supersedes it."""

    episode_id: str
    reward: float
    passed: bool
    details: dict[str, Any] = field(default_factory=dict)
    verifier_version: str = ""
    verified_at: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        if not (math.isfinite(self.reward) and 0.0 <= self.reward <= 1.0):
            raise StoreError(f"verdict reward {self.reward!r} for {self.episode_id} is not in [0, 1]")


@dataclass(frozen=True, eq=False)
class Group:
    """All samples of one GRPO group, in sample order, with each one's latest verdict (or None)."""

    group_id: str
    episodes: tuple[Episode, ...]
    verdicts: tuple[Verdict | None, ...]

    @property
    def task_id(self) -> str:
        return self.episodes[0].task_id

    @property
    def rewards(self) -> np.ndarray:
        """Rewards in sample order; NaN where an episode has no verdict yet."""
        return np.array([v.reward if v else np.nan for v in self.verdicts], dtype=np.float64)


@dataclass(frozen=True)
class Quarantined:
    """A shard that could not be read: where it was, where it went (None: it could not be moved), why."""

    original: Path
    path: Path | None
    reason: str


@dataclass(frozen=True, kw_only=True)
class Query:
    """Which episodes to read: each string filter takes one value or a collection; reward needs a verdict."""

    split: str | Collection[str] | None = None
    taskpack: str | Collection[str] | None = None
    task_id: str | Collection[str] | None = None
    status: str | Collection[str] | None = None
    min_policy_version: int | None = None
    max_policy_version: int | None = None
    min_reward: float | None = None
    max_reward: float | None = None

    def __post_init__(self) -> None:
        if unknown := set(self._values("status") or ()) - set(STATUSES):
            raise StoreError(f"unknown status {sorted(unknown)}; statuses are {STATUSES}")

    def _values(self, name: str) -> list[str] | None:
        value = getattr(self, name)
        return None if value is None else [value] if isinstance(value, str) else list(value)

    @property
    def by_reward(self) -> bool:
        return self.min_reward is not None or self.max_reward is not None

    @property
    def columns(self) -> list[str]:
        """The columns the filters need."""
        names = [n for n in ("split", "taskpack", "task_id", "status") if getattr(self, n) is not None]
        versions = self.min_policy_version is not None or self.max_policy_version is not None
        return names + ["policy_version"] * versions + ["episode_id"] * self.by_reward

    def mask(self, table: pa.Table, verdicts: dict[str, Verdict] | None) -> np.ndarray:
        keep = np.ones(table.num_rows, bool)
        for name in ("split", "taskpack", "task_id", "status"):
            if (values := self._values(name)) is not None:
                keep &= pc.is_in(table[name], value_set=pa.array(values, pa.string())).to_numpy(zero_copy_only=False)
        versions = table["policy_version"].to_numpy() if "policy_version" in self.columns else None
        if self.min_policy_version is not None:
            keep &= versions >= self.min_policy_version
        if self.max_policy_version is not None:
            keep &= versions <= self.max_policy_version
        if self.by_reward:
            low, high = self.min_reward or -math.inf, math.inf if self.max_reward is None else self.max_reward
            rewards = [v.reward if (v := verdicts.get(e)) else math.nan for e in table["episode_id"].to_pylist()]
            keep &= np.array([low <= r <= high for r in rewards], bool)
        return keep


# --- the on-disk schema and its encodings ---------------------------------------------------------

_STR, _I32, _I64, _F64 = pa.string(), pa.int32(), pa.int64(), pa.float64()
EPISODE_SCHEMA = pa.schema(
    [
        ("episode_id", _STR), ("run", _STR), ("taskpack", _STR), ("taskpack_version", _STR), ("task_id", _STR),
        ("split", _STR), ("group_id", _STR), ("sample_index", _I32), ("group_size", _I32), ("model", _STR),
        ("policy_version", _I64), ("status", _STR), ("error_type", _STR), ("error_message", _STR),
        ("image_digest", _STR), ("artifact_sha256", _STR), ("finished_at", _F64),
        # derived from the mask when written, so that listings never read the token columns
        ("num_tokens", _I32), ("model_tokens", _I32), ("prompt_tokens", _I32),
        ("token_ids", pa.list_(pa.int32())), ("loss_mask", pa.list_(pa.bool_())), ("logprobs", pa.list_(pa.float32())),
        ("transcript", _STR), ("tool_calls", _STR), ("timings", _STR), ("metadata", _STR),
    ]
)  # fmt: skip
VERDICT_SCHEMA = pa.schema(
    [("episode_id", _STR), ("reward", _F64), ("passed", pa.bool_()), ("details", _STR),
     ("verifier_version", _STR), ("verified_at", _F64)]
)  # fmt: skip
META_COLUMNS = EPISODE_SCHEMA.names[: EPISODE_SCHEMA.get_field_index("token_ids")]  # the small scalar columns
_SCALARS = [n for n in META_COLUMNS if n not in ("num_tokens", "model_tokens", "prompt_tokens")]
_ARRAYS = ("token_ids", "loss_mask", "logprobs")
_JSONS = ("transcript", "tool_calls", "timings", "metadata")

# Per column, measured with scripts/bench_store.py: plain int32 token ids at zstd 3 (zstd finds the
# repeated token runs), byte-stream-split logprobs at zstd 1 (their mantissas are noise, more effort
# buys nothing), text at zstd 6. Large pages let zstd see the prompt that a group's samples share.
WRITE_OPTIONS: dict[str, dict[str, Any]] = {
    "episodes": dict(
        compression="zstd", data_page_size=4 << 20, write_page_checksum=True,
        use_dictionary=["run", "taskpack", "taskpack_version", "task_id", "split", "group_id", "model", "status",
                        "error_type", "error_message", "image_digest", "metadata"],
        column_encoding={"token_ids.list.element": "PLAIN", "loss_mask.list.element": "RLE",
                         "logprobs.list.element": "BYTE_STREAM_SPLIT"},
        compression_level={"token_ids.list.element": 3, "logprobs.list.element": 1, "loss_mask.list.element": 1,
                           "transcript": 6, "tool_calls": 6},
        write_statistics=["run", "taskpack", "task_id", "split", "sample_index", "policy_version", "status"],
    ),
    "verdicts": dict(compression="zstd", write_page_checksum=True, use_dictionary=["verifier_version"],
                     write_statistics=["reward", "verified_at"]),
}  # fmt: skip


def _dumps(value: Any, what: str) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        fix = "use dicts, lists, str and numbers; decode tool output bytes with errors='surrogateescape'"
        raise StoreError(f"{what} is not JSON: {e}", fix=fix) from e
    try:
        text.encode()
    except UnicodeEncodeError:  # lone surrogates (non-UTF-8 tool output): \u escapes keep them exactly
        text = json.dumps(value, separators=(",", ":"))
    return text


def episode_json(episode: Episode) -> tuple[str, ...]:
    """The episode's JSON fields as text; a writer does this in `add`, so that a bad episode fails there."""
    return tuple(_dumps(getattr(episode, n), f"episode {episode.episode_id} {n}") for n in _JSONS)


def _list_array(arrays: list[np.ndarray], value_type: pa.DataType) -> pa.ListArray:
    offsets = np.zeros(len(arrays) + 1, np.int32)
    np.cumsum([len(a) for a in arrays], out=offsets[1:])
    values = np.concatenate(arrays) if arrays else np.zeros(0, value_type.to_pandas_dtype())
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values, value_type))


def _versioned(schema: pa.Schema, table: str) -> pa.Schema:
    return schema.with_metadata({"ptrain.schema_version": str(SCHEMA_VERSION), "ptrain.table": table})


def episodes_table(episodes: list[Episode], texts: list[tuple[str, ...]] | None = None) -> pa.Table:
    """Episodes as an Arrow table in the on-disk schema (`texts`: their `episode_json`, if done already)."""
    texts = texts if texts is not None else [episode_json(e) for e in episodes]
    columns: dict[str, Any] = {name: [getattr(e, name) for e in episodes] for name in _SCALARS}
    for name in ("num_tokens", "model_tokens", "prompt_tokens"):
        columns[name] = [getattr(e, name) for e in episodes]
    for name, value_type in zip(_ARRAYS, (pa.int32(), pa.bool_(), pa.float32()), strict=True):
        columns[name] = _list_array([getattr(e, name) for e in episodes], value_type)
    for k, name in enumerate(_JSONS):
        columns[name] = [t[k] for t in texts]
    return pa.table(columns, schema=_versioned(EPISODE_SCHEMA, "episodes"))


def episodes_from_table(table: pa.Table) -> list[Episode]:
    """The inverse of `episodes_table`."""
    scalars = {name: table[name].to_pylist() for name in _SCALARS}
    texts = {name: table[name].to_pylist() for name in _JSONS}
    arrays = {}
    for name in _ARRAYS:
        column = table[name].combine_chunks()  # offsets honour a slice; values are the whole child array
        arrays[name] = (column.offsets.to_numpy(), column.values.to_numpy(zero_copy_only=False))
    return [
        Episode(
            **{name: values[i] for name, values in scalars.items()},
            **{name: values[offsets[i] : offsets[i + 1]] for name, (offsets, values) in arrays.items()},
            **{name: json.loads(values[i]) for name, values in texts.items()},
        )
        for i in range(table.num_rows)
    ]


def verdicts_table(verdicts: list[Verdict], texts: list[tuple[str, ...]] | None = None) -> pa.Table:
    columns = {f.name: [getattr(v, f.name) for v in verdicts] for f in fields(Verdict)}
    columns["details"] = [t[0] for t in texts] if texts is not None else [verdict_json(v)[0] for v in verdicts]
    return pa.table(columns, schema=_versioned(VERDICT_SCHEMA, "verdicts"))


def verdict_json(verdict: Verdict) -> tuple[str, ...]:
    return (_dumps(verdict.details, f"verdict for {verdict.episode_id} details"),)


def verdicts_from_table(table: pa.Table) -> list[Verdict]:
    return [Verdict(**{**row, "details": json.loads(row["details"])}) for row in table.to_pylist()]


# --- files: atomic writes, names no two writers share ---------------------------------------------

_HOST = re.sub(r"[^A-Za-z0-9.]", "_", socket.gethostname()) or "host"


def _temp_path(directory: Path) -> Path:
    """A dot-name that no reader lists and that says which host and process is writing it."""
    return directory / f".{_HOST}-{os.getpid()}-{secrets.token_hex(6)}.tmp"


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, write: Callable[[Path], None]) -> Path:
    """Call `write(temp path)`, fsync, rename to `path`, fsync the folder: readers see all or nothing."""
    tmp = _temp_path(path.parent)
    try:
        write(tmp)
        _fsync(tmp)
        os.replace(tmp, path)
        _fsync(path.parent)
    except OSError as e:
        raise StoreError(f"could not write {path}: {e}", fix="check free disk space and permissions") from e
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _sweep_temps(directory: Path) -> None:
    """Remove the temp files of killed writers on this host; a live writer's file is left alone."""
    for tmp in directory.glob(".*.tmp"):
        host, pid = (tmp.name[1:].split("-") + [""])[:2]
        if host == _HOST and pid.isdigit():
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                tmp.unlink(missing_ok=True)
            except PermissionError:
                pass  # alive, someone else's


def _shard_name(token: str, seq: int) -> str:
    now = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"{int(now % 1 * 1e6):06d}Z"
    return f"{stamp}-{_HOST}-{os.getpid()}-{token}-{seq:06d}.parquet"


# --- writing --------------------------------------------------------------------------------------


class Writer:
    """Buffers episodes and verdicts and writes each flush as new shards that no other writer touches.

    Flushes when `flush_every` rows are buffered, when the oldest buffered row is `flush_interval_s`
    old (a background thread looks), and on `flush()` and `close()`. Thread-safe; one per process.
    A failed background flush keeps its rows and is raised by the next call.
    """

    def __init__(self, store: Store, flush_every: int = 512, flush_interval_s: float = 30.0):
        self.store, self.flush_every, self.flush_interval_s = store, flush_every, flush_interval_s
        self.shards_written = 0
        self._token, self._pid = secrets.token_hex(4), os.getpid()
        self._buffers: dict[str, list[tuple[Any, tuple[str, ...]]]] = {"episodes": [], "verdicts": []}
        self._oldest: float | None = None
        self._error: Exception | None = None
        self._closed = False
        self._lock = threading.RLock()
        self._stop = threading.Event()
        for name in self._buffers:
            (store.path / name).mkdir(parents=True, exist_ok=True)
            _sweep_temps(store.path / name)
        self._timer = threading.Thread(target=self._flush_on_time, name="ptrain-store-flush", daemon=True)
        self._timer.start()
        atexit.register(self.close)

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(self, episode: Episode) -> None:
        self._add("episodes", episode, episode_json(episode))

    def add_verdict(self, verdict: Verdict) -> None:
        self._add("verdicts", verdict, verdict_json(verdict))

    def _add(self, table: str, item: Episode | Verdict, texts: tuple[str, ...]) -> None:
        with self._lock:
            self._check()
            self._buffers[table].append((item, texts))
            self._oldest = self._oldest or time.monotonic()
            if len(self._buffers[table]) >= self.flush_every:
                self._flush()

    def flush(self) -> None:
        """Write everything buffered; once this returns, it survives a crash."""
        with self._lock:
            self._check()
            self._flush()

    def close(self) -> None:
        """Write what is buffered and stop; rows that cannot be written even now raise StoreError."""
        if self._closed:
            return
        self._stop.set()
        self._timer.join()
        atexit.unregister(self.close)
        with self._lock:
            self._closed = True
            if os.getpid() == self._pid:  # a forked child's copy of the buffer is its parent's to write
                self._flush()

    def _check(self) -> None:
        if self._closed:
            raise StoreError("this store writer is closed")
        if os.getpid() != self._pid:
            raise StoreError("a store Writer cannot cross a fork", fix="create one Writer per process")
        if self._error is not None:
            error, self._error = self._error, None
            raise StoreError(f"a background flush failed: {error}") from error

    def _flush(self) -> None:
        for table, rows in self._buffers.items():
            if rows:
                items, texts = (list(column) for column in zip(*rows, strict=True))
                data = (episodes_table if table == "episodes" else verdicts_table)(items, texts)
                self.shards_written += 1
                path = self.store.path / table / _shard_name(self._token, self.shards_written)
                write_atomic(path, lambda tmp, d=data, t=table: pq.write_table(d, tmp, **WRITE_OPTIONS[t]))
                rows.clear()  # only once written: a failed write keeps its rows for the next try
        self._oldest = None

    def _flush_on_time(self) -> None:
        while not self._stop.wait(min(1.0, self.flush_interval_s / 4)):
            with self._lock:
                if self._oldest is not None and time.monotonic() - self._oldest >= self.flush_interval_s:
                    try:
                        self._flush()
                    except Exception as e:  # raised to the owner on its next call
                        self._error = e
                        log.error("store: background flush failed: %s", e)


# --- the store ------------------------------------------------------------------------------------


class Store:
    """A run directory. Write with `writer()`; read with `episodes()`, `groups()`, `done()`, `summary()`.

    Read methods take the fields of `Query` as keyword filters, e.g. `episodes(split="train",
    status=("ok", "truncated"), min_reward=1.0)`.
    """

    def __init__(self, path: str | Path, create: bool = False):
        self.path = Path(path)
        if create:
            for name in ("episodes", "verdicts", "artifacts"):
                (self.path / name).mkdir(parents=True, exist_ok=True)
        elif not (self.path / "episodes").is_dir():
            raise StoreError(f"{self.path} is not a ptrain run directory (it has no episodes/ folder)",
                             fix="check the path; a rollout creates the run directory")  # fmt: skip
        self.quarantined: list[Quarantined] = []
        self._checked: set[Path] = set()

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    def writer(self, flush_every: int = 512, flush_interval_s: float = 30.0) -> Writer:
        return Writer(self, flush_every=flush_every, flush_interval_s=flush_interval_s)

    def put_artifact(self, data: bytes) -> str:
        """Store a blob once, by the sha256 of its content, zstd-compressed; return the digest."""
        digest = hashlib.sha256(data).hexdigest()
        path = self._artifact_path(digest)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)

            def write(tmp: Path) -> None:
                with pa.CompressedOutputStream(str(tmp), "zstd") as out:
                    out.write(data)

            write_atomic(path, write)
        return digest

    def artifact(self, sha256: str) -> bytes:
        """A stored blob, checked against its digest."""
        path = self._artifact_path(sha256)
        try:
            with pa.CompressedInputStream(str(path), "zstd") as f:
                data = f.read()
        except FileNotFoundError:
            raise StoreError(f"no artifact {sha256} in {self.path / 'artifacts'}") from None
        except (OSError, pa.ArrowException) as e:
            raise StoreError(f"artifact {path} is damaged: {e}") from e
        if hashlib.sha256(data).hexdigest() != sha256:
            raise StoreError(f"artifact {path} is damaged: its content no longer matches its sha256")
        return data

    def _artifact_path(self, sha256: str) -> Path:
        return self.path / "artifacts" / sha256[:2] / f"{sha256}.zst"

    def shards(self, table: str) -> list[Path]:
        """The readable shards of "episodes" or "verdicts", oldest first; damaged ones go to quarantine."""
        directory = self.path / table
        paths = sorted(p for p in directory.glob("[!.]*.parquet")) if directory.is_dir() else []
        return [p for p in paths if p in self._checked or self._check(p, table)]

    def _check(self, path: Path, table: str) -> bool:
        try:
            metadata = pq.read_metadata(path).metadata or {}
        except FileNotFoundError:
            return False  # moved aside by another reader, which warned
        except (OSError, pa.ArrowException) as e:
            return self._quarantine(path, table, f"unreadable footer: {e}")
        version = metadata.get(b"ptrain.schema_version", b"").decode()
        if metadata.get(b"ptrain.table", b"").decode() != table or not version.isdigit():
            return self._quarantine(path, table, f"not a ptrain {table} shard")
        if int(version) > SCHEMA_VERSION:
            raise StoreError(f"{path} was written with store schema {version}; this ptrain reads up to "
                             f"{SCHEMA_VERSION}", fix="upgrade ptrain (pip install -U ptrain) to read this run")  # fmt: skip
        self._checked.add(path)
        return True

    def _read(self, path: Path, table: str, columns: list[str] | None = None) -> pa.Table | None:
        try:
            with pq.ParquetFile(path, page_checksum_verification=True) as f:
                return f.read(columns=columns)
        except FileNotFoundError:
            self._warn(f"shard {path} disappeared while being read (moved aside by another reader?)")
        except (OSError, pa.ArrowException) as e:
            self._quarantine(path, table, f"unreadable data: {e}")
        return None

    def _quarantine(self, path: Path, table: str, reason: str) -> bool:
        self._checked.discard(path)
        moved: Path | None = self.path / "quarantine" / table / path.name
        try:
            moved.parent.mkdir(parents=True, exist_ok=True)
            if moved.exists():
                moved = moved.with_name(f"{path.stem}.{secrets.token_hex(3)}{path.suffix}")
            os.replace(path, moved)
        except OSError:
            moved = None
        self.quarantined.append(Quarantined(path, moved, reason))
        self._warn(f"damaged shard {path}: {reason}; " + (f"moved to {moved}" if moved else "left in place"))
        return False

    def _warn(self, message: str) -> None:
        log.warning("store: %s", message)
        warnings.warn(message, StoreWarning, stacklevel=3)

    def _scan(
        self, columns: list[str], query: Query, verdicts: dict | None = None, shards: list[Path] | None = None
    ) -> Iterator[tuple[int, Path, pa.Table]]:
        """(shard index, path, the rows the query selects, as `columns`) for every readable episode shard."""
        for i, path in enumerate(self.shards("episodes") if shards is None else shards):
            table = self._read(path, "episodes", list(dict.fromkeys(columns + query.columns)))
            if table is not None:
                yield i, path, table.filter(query.mask(table, verdicts)).select(columns)

    def _episodes_in(self, path: Path, episode_ids: set[str] | None = None) -> list[Episode]:
        table = self._read(path, "episodes")
        if table is None:
            return []
        if episode_ids is not None:
            keep = [i for i, e in enumerate(table["episode_id"].to_pylist()) if e in episode_ids]
            table = table if len(keep) == table.num_rows else table.take(keep)
        return episodes_from_table(table)

    def latest_verdicts(self) -> dict[str, Verdict]:
        """The newest verdict of every verified episode (by verified_at; on a tie, the later shard)."""
        latest: dict[str, Verdict] = {}
        for path in self.shards("verdicts"):
            table = self._read(path, "verdicts")
            for verdict in verdicts_from_table(table) if table is not None else ():
                current = latest.get(verdict.episode_id)
                if current is None or verdict.verified_at >= current.verified_at:
                    latest[verdict.episode_id] = verdict
        return latest

    def episodes(self, **filters: Any) -> Iterator[Episode]:
        """Every stored episode that matches the filters, shard by shard."""
        query = Query(**filters)
        if not query.columns:  # nothing to filter: read each shard once
            for path in self.shards("episodes"):
                yield from self._episodes_in(path)
            return
        verdicts = self.latest_verdicts() if query.by_reward else None
        for _, path, selected in self._scan(["episode_id"], query, verdicts):
            if selected.num_rows:
                yield from self._episodes_in(path, set(selected["episode_id"].to_pylist()))

    def episode(self, episode_id: str) -> Episode:
        """One episode, by its id or a unique prefix of it."""
        found = []
        for _, path, table in self._scan(["episode_id"], Query()):
            found += [(path, e) for e in table["episode_id"].to_pylist() if e.startswith(episode_id)]
        if not found:
            raise StoreError(f"no episode in {self.path} has an id starting {episode_id!r}")
        if len(found) > 1:
            raise StoreError(f"{len(found)} episodes have an id starting {episode_id!r}", fix="give more of the id")
        path, full_id = found[0]
        return self._episodes_in(path, {full_id})[0]

    def done(self, **filters: Any) -> set[tuple[str, int]]:
        """The (task_id, sample_index) pairs already stored: the work a resumed stage skips."""
        query = Query(**filters)
        verdicts = self.latest_verdicts() if query.by_reward else None
        pairs: set[tuple[str, int]] = set()
        for _, _, table in self._scan(["task_id", "sample_index"], query, verdicts):
            pairs.update(zip(table["task_id"].to_pylist(), table["sample_index"].to_pylist(), strict=True))
        return pairs

    def summary(self, **filters: Any) -> pa.Table:
        """One row per episode: the scalar columns, and the latest reward and passed (null if unverified)."""
        query, verdicts = Query(**filters), self.latest_verdicts()
        tables = [t for _, _, t in self._scan(META_COLUMNS, query, verdicts)]
        table = pa.concat_tables(tables) if tables else EPISODE_SCHEMA.empty_table().select(META_COLUMNS)
        joined = [verdicts.get(e) for e in table["episode_id"].to_pylist()]
        table = table.append_column("reward", pa.array([v.reward if v else None for v in joined], _F64))
        return table.append_column("passed", pa.array([v.passed if v else None for v in joined], pa.bool_()))

    def groups(self, include_incomplete: bool = False, **filters: Any) -> Iterator[Group]:
        """Complete GRPO groups (every sample of a group id), each with its latest verdicts.

        Memory stays bounded: a first pass reads only the small id columns to learn in which shard
        each group ends; the second reads one shard at a time and yields each group as soon as its
        last sample is in, so only groups that span shards are held. Filters must be ones that a
        whole group shares (split, taskpack, task_id, policy version). Incomplete groups are counted
        in a warning and skipped unless asked for; a repeated (group, sample) keeps the first one.
        """
        query = Query(**filters)
        if query.status is not None or query.by_reward:
            raise StoreError("groups() keeps groups whole: filter by split, taskpack, task_id or policy version")
        members: dict[str, dict[int, tuple[int, str]]] = {}  # group -> sample -> (shard, episode id)
        sizes: dict[str, int] = {}
        repeats = 0
        names = ["episode_id", "group_id", "sample_index", "group_size"]
        shards = self.shards("episodes")  # one listing for both passes: shards written meanwhile wait
        for i, _, table in self._scan(names, query, shards=shards):
            for episode_id, group_id, sample, size in zip(*(table[n].to_pylist() for n in names), strict=True):
                samples = members.setdefault(group_id, {})
                repeats += sample in samples
                samples.setdefault(sample, (i, episode_id))
                sizes.setdefault(group_id, size)
        if repeats:
            self._warn(f"{repeats} episodes repeat a (group, sample) already stored; the first of each is used")
        complete = {g: s for g, s in members.items() if len(s) == sizes[g]}
        if len(complete) < len(members):
            log.warning("store: %d of %d groups are incomplete%s", len(members) - len(complete), len(members),
                        "" if include_incomplete else " and skipped")  # fmt: skip
        wanted = members if include_incomplete else complete
        ends: dict[int, list[str]] = {}  # shard -> the groups whose last sample is in it
        needed: dict[int, set[str]] = {}  # shard -> the episodes to read from it
        for group_id, samples in wanted.items():
            ends.setdefault(max(i for i, _ in samples.values()), []).append(group_id)
            for i, episode_id in samples.values():
                needed.setdefault(i, set()).add(episode_id)
        verdicts = self.latest_verdicts()
        pending: dict[str, dict[int, Episode]] = {}
        for i in sorted(needed):
            for episode in self._episodes_in(shards[i], needed[i]):
                pending.setdefault(episode.group_id, {})[episode.sample_index] = episode
            for group_id in ends.get(i, ()):
                samples = pending.pop(group_id, {})
                if len(samples) == len(wanted[group_id]):  # else a shard turned out damaged (warned)
                    ordered = tuple(samples[s] for s in sorted(samples))
                    yield Group(group_id, ordered, tuple(verdicts.get(e.episode_id) for e in ordered))

    def disk_usage(self) -> dict[str, tuple[int, int]]:
        """(files, bytes) per folder; "temp" counts the unfinished writes (live or killed writers)."""
        usage = {}
        for name in ("episodes", "verdicts", "artifacts", "quarantine", "temp"):
            files = [p for p in (self.path / name).rglob("[!.]*") if p.is_file()]
            if name == "temp":
                files = [p for d in ("episodes", "verdicts", "artifacts") for p in (self.path / d).rglob(".*.tmp")]
            usage[name] = (len(files), sum(p.stat().st_size for p in files))
        return usage
