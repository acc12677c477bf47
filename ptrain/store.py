"""The trajectory store: one run directory of immutable Parquet shards that every stage reads and writes.

    RUN/episodes/    one zstd Parquet shard per writer flush, <utc time>-<host>-<pid>-<token>-<seq>.parquet
    RUN/verdicts/    verdicts, shards named the same way; re-verifying appends, readers take the latest
    RUN/artifacts/   large per-episode blobs (workspace tars) by content: ab/<sha256>.zst, stored once
    RUN/quarantine/  shards that could not be read, moved aside with a warning that names them

Why this shape:
- Crash safety without locks. A flush writes its shard to a dot-temp name in the same folder, fsyncs
  it, renames it and fsyncs the folder, so a reader only ever sees whole shards and a crash loses at
  most a writer's unflushed buffer (flushed by count and by time). Shard names carry host, pid, a
  random token and a sequence number: any number of writers (threads, processes, machines on a shared
  filesystem) each write their own files.
- Stages stay independent. Verdicts are their own table, so re-verifying with a better verifier
  appends rows and never rewrites an episode; `done()` tells a stage which (task, sample) pairs exist,
  so a restarted stage neither repeats nor loses work.
- Small and fast. Each column gets the encoding that suits it: dictionaries for repeated strings,
  plain int32 token ids (zstd finds the repeated token runs), byte-stream-split float32 logprobs
  (kept bit for bit), run-length booleans for the loss mask, and JSON text for transcripts.
- Plain files. Any Parquet reader (pyarrow, pandas, DuckDB, `datasets.load_dataset("parquet")`)
  reads the shards; every shard's footer carries `ptrain.schema_version`, and a shard from a newer
  schema is an error rather than a misreading.
- Damage is visible. A shard that cannot be read is moved to quarantine/ with a `StoreWarning`
  naming it, recorded in `Store.quarantined`, and everything else stays readable.
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
from collections.abc import Collection, Iterator
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


def _int32s(values: Any, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.size == 0:
        return np.zeros(0, np.int32)
    if array.ndim != 1 or array.dtype.kind not in "iu" or array.min() < 0 or array.max() > np.iinfo(np.int32).max:
        raise StoreError(
            f"{name} must be a flat sequence of non-negative int32 token ids, got {array.dtype} {array.shape}"
        )
    return array.astype(np.int32)  # a copy: the episode owns its arrays


def _mask(values: Any, n: int) -> np.ndarray:
    array = np.asarray(values)
    if array.size == 0:
        array = np.zeros(0, bool)
    if array.shape != (n,) or (array.dtype != bool and not np.isin(array, (0, 1)).all()):
        raise StoreError(f"loss_mask must hold one 0/1 per token ({n}), got {array.dtype} {array.shape}")
    return array.astype(bool)


def _floats(values: Any, n: int) -> np.ndarray:
    array = np.asarray(values, dtype=np.float32).copy()  # float32 is what engines sample with; kept bit for bit
    if array.shape != (n,):
        raise StoreError(f"logprobs must hold one float per token ({n}), got shape {array.shape}")
    return array


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


@dataclass(frozen=True, eq=False, kw_only=True)
class Episode:
    """One rollout of one task, token-in token-out, as the rollout stage produced it.

    `token_ids` is the whole sequence (prompt, model turns, tool outputs); `loss_mask` is 1 on model
    tokens; `logprobs` are the behaviour (sampling) logprobs, one per token (0 where not sampled).
    `transcript` is the chat as messages and `tool_calls` one record per call, both JSON values
    (decode non-UTF-8 tool output with errors="surrogateescape"; it round-trips exactly).
    `status` is one of STATUSES; a failed episode names its error type (e.g. "SandboxError") so
    infrastructure failures are never trained on as model failures. `group_id` must be the same on a
    resumed run (e.g. derived from task and policy version) so that groups complete.
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
        tokens = _int32s(self.token_ids, "token_ids")
        object.__setattr__(self, "token_ids", _frozen(tokens))
        object.__setattr__(self, "loss_mask", _frozen(_mask(self.loss_mask, len(tokens))))
        object.__setattr__(self, "logprobs", _frozen(_floats(self.logprobs, len(tokens))))
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
        """Tokens before the model's first token."""
        return int(np.argmax(self.loss_mask)) if self.loss_mask.any() else self.num_tokens

    @property
    def tool_tokens(self) -> int:
        return self.num_tokens - self.prompt_tokens - self.model_tokens

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Episode):
            return NotImplemented
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if isinstance(a, np.ndarray):
                if a.dtype == np.float32:  # bit for bit, NaN payloads included
                    a, b = a.view(np.uint32), b.view(np.uint32)
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
    """A shard that could not be read: where it was, where it went (None if it could not be moved), why."""

    original: Path
    path: Path | None
    reason: str


@dataclass(frozen=True, kw_only=True)
class Query:
    """Which episodes to read. Strings match one value or any of a collection; reward needs a verdict."""

    split: str | Collection[str] | None = None
    taskpack: str | Collection[str] | None = None
    task_id: str | Collection[str] | None = None
    status: str | Collection[str] | None = None
    min_policy_version: int | None = None
    max_policy_version: int | None = None
    min_reward: float | None = None
    max_reward: float | None = None

    def __post_init__(self) -> None:
        unknown = set(_values(self.status) or ()) - set(STATUSES)
        if unknown:
            raise StoreError(f"unknown status {sorted(unknown)}; statuses are {STATUSES}")

    @property
    def by_reward(self) -> bool:
        return self.min_reward is not None or self.max_reward is not None

    @property
    def columns(self) -> list[str]:
        names = [n for n in ("split", "taskpack", "task_id", "status") if getattr(self, n) is not None]
        if self.min_policy_version is not None or self.max_policy_version is not None:
            names.append("policy_version")
        return names + ["episode_id"] * self.by_reward

    def mask(self, table: pa.Table, verdicts: dict[str, Verdict] | None) -> np.ndarray:
        keep = np.ones(table.num_rows, bool)
        for name in ("split", "taskpack", "task_id", "status"):
            if (values := _values(getattr(self, name))) is not None:
                keep &= pc.is_in(table[name], value_set=pa.array(values, pa.string())).to_numpy(zero_copy_only=False)
        if self.min_policy_version is not None:
            keep &= table["policy_version"].to_numpy() >= self.min_policy_version
        if self.max_policy_version is not None:
            keep &= table["policy_version"].to_numpy() <= self.max_policy_version
        if self.by_reward:
            low = -math.inf if self.min_reward is None else self.min_reward
            high = math.inf if self.max_reward is None else self.max_reward
            rewards = [v.reward if (v := verdicts.get(e)) else math.nan for e in table["episode_id"].to_pylist()]
            keep &= np.array([low <= r <= high for r in rewards], bool)
        return keep


def _values(value: str | Collection[str] | None) -> list[str] | None:
    return None if value is None else [value] if isinstance(value, str) else list(value)


# --- the on-disk schema -------------------------------------------------------------------------

_STR, _I32, _I64, _F64 = pa.string(), pa.int32(), pa.int64(), pa.float64()
EPISODE_SCHEMA = pa.schema(
    [
        ("episode_id", _STR), ("run", _STR), ("taskpack", _STR), ("taskpack_version", _STR),
        ("task_id", _STR), ("split", _STR), ("group_id", _STR), ("sample_index", _I32),
        ("group_size", _I32), ("model", _STR), ("policy_version", _I64), ("status", _STR),
        ("error_type", _STR), ("error_message", _STR), ("image_digest", _STR), ("artifact_sha256", _STR),
        ("finished_at", _F64),
        # derived from the mask at write time so that listings never read the token columns
        ("num_tokens", _I32), ("model_tokens", _I32), ("prompt_tokens", _I32),
        ("token_ids", pa.list_(pa.int32())), ("loss_mask", pa.list_(pa.bool_())),
        ("logprobs", pa.list_(pa.float32())),
        ("transcript", _STR), ("tool_calls", _STR), ("timings", _STR), ("metadata", _STR),
    ]
)  # fmt: skip
VERDICT_SCHEMA = pa.schema(
    [("episode_id", _STR), ("reward", _F64), ("passed", pa.bool_()), ("details", _STR),
     ("verifier_version", _STR), ("verified_at", _F64)]
)  # fmt: skip
SCHEMAS = {"episodes": EPISODE_SCHEMA, "verdicts": VERDICT_SCHEMA}
META_COLUMNS = EPISODE_SCHEMA.names[: EPISODE_SCHEMA.get_field_index("token_ids")]  # the small scalar columns
_JSON_FIELDS = ("transcript", "tool_calls", "timings", "metadata")
_SCALAR_FIELDS = [n for n in META_COLUMNS if n not in ("num_tokens", "model_tokens", "prompt_tokens")]

_DICTIONARY = ["run", "taskpack", "taskpack_version", "task_id", "split", "group_id", "model", "status",
               "error_type", "error_message", "image_digest", "metadata", "verifier_version"]  # fmt: skip
_WRITE_OPTIONS = dict(
    compression="zstd",
    compression_level=6,  # measured: level 6 writes ~2x faster than 9 and costs ~5% in size
    data_page_size=4 << 20,  # large pages let zstd see the prompt that samples of a group share
    write_page_checksum=True,  # so that a damaged page is found when read, not trained on
    column_encoding={
        "token_ids.list.element": "PLAIN",
        "loss_mask.list.element": "RLE",
        "logprobs.list.element": "BYTE_STREAM_SPLIT",
    },
    write_statistics=[
        "run",
        "taskpack",
        "task_id",
        "split",
        "sample_index",
        "policy_version",
        "status",
        "finished_at",
        "reward",
        "verified_at",
    ],  # fmt: skip
)


def _dumps(value: Any, what: str) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        raise StoreError(
            f"{what} is not JSON: {e}",
            fix="use dicts, lists, str and numbers; decode tool output bytes with errors='surrogateescape'",
        ) from e
    try:
        text.encode()
    except UnicodeEncodeError:  # lone surrogates (non-UTF-8 tool output): \u escapes keep them exactly
        text = json.dumps(value, separators=(",", ":"))
    return text


def _list_array(arrays: list[np.ndarray], value_type: pa.DataType) -> pa.ListArray:
    offsets = np.zeros(len(arrays) + 1, np.int32)
    np.cumsum([len(a) for a in arrays], out=offsets[1:])
    values = np.concatenate(arrays) if arrays else np.zeros(0, value_type.to_pandas_dtype())
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values, value_type))


def episode_json(episode: Episode) -> tuple[str, ...]:
    """The episode's JSON fields as text; a writer does this in `add`, so a bad episode fails there."""
    return tuple(_dumps(getattr(episode, n), f"episode {episode.episode_id} {n}") for n in _JSON_FIELDS)


def episodes_table(episodes: list[Episode], texts: list[tuple[str, ...]] | None = None) -> pa.Table:
    """Episodes as one Arrow table in the on-disk schema (`texts`: their `episode_json`, if done already)."""
    texts = texts if texts is not None else [episode_json(e) for e in episodes]
    columns: dict[str, Any] = {name: [getattr(e, name) for e in episodes] for name in _SCALAR_FIELDS}
    columns["num_tokens"] = [e.num_tokens for e in episodes]
    columns["model_tokens"] = [e.model_tokens for e in episodes]
    columns["prompt_tokens"] = [e.prompt_tokens for e in episodes]
    columns["token_ids"] = _list_array([e.token_ids for e in episodes], pa.int32())
    columns["loss_mask"] = _list_array([e.loss_mask for e in episodes], pa.bool_())
    columns["logprobs"] = _list_array([e.logprobs for e in episodes], pa.float32())
    for k, name in enumerate(_JSON_FIELDS):
        columns[name] = [t[k] for t in texts]
    return pa.table(columns, schema=_with_version(EPISODE_SCHEMA, "episodes"))


def verdict_json(verdict: Verdict) -> tuple[str]:
    return (_dumps(verdict.details, f"verdict for {verdict.episode_id} details"),)


def verdicts_table(verdicts: list[Verdict], texts: list[tuple[str]] | None = None) -> pa.Table:
    texts = texts if texts is not None else [verdict_json(v) for v in verdicts]
    columns = {f.name: [getattr(v, f.name) for v in verdicts] for f in fields(Verdict)}
    columns["details"] = [t[0] for t in texts]
    return pa.table(columns, schema=_with_version(VERDICT_SCHEMA, "verdicts"))


def _with_version(schema: pa.Schema, table: str) -> pa.Schema:
    return schema.with_metadata({"ptrain.schema_version": str(SCHEMA_VERSION), "ptrain.table": table})


def _list_column(table: pa.Table, name: str) -> tuple[np.ndarray, np.ndarray]:
    array = table[name].combine_chunks()
    return array.offsets.to_numpy(), array.values.to_numpy(zero_copy_only=False)


def episodes_from_table(table: pa.Table) -> list[Episode]:
    """The inverse of `episodes_table`."""
    scalars = {name: table[name].to_pylist() for name in _SCALAR_FIELDS}
    lists = {name: _list_column(table, name) for name in ("token_ids", "loss_mask", "logprobs")}
    texts = {name: table[name].to_pylist() for name in _JSON_FIELDS}
    result = []
    for i in range(table.num_rows):
        arrays = {name: values[offsets[i] : offsets[i + 1]] for name, (offsets, values) in lists.items()}
        jsons = {name: json.loads(texts[name][i]) for name in _JSON_FIELDS}
        result.append(Episode(**{name: scalars[name][i] for name in _SCALAR_FIELDS}, **arrays, **jsons))
    return result


def verdicts_from_table(table: pa.Table) -> list[Verdict]:
    rows = table.to_pylist()
    return [Verdict(**{**row, "details": json.loads(row["details"])}) for row in rows]


# --- files: atomic writes and temp names ---------------------------------------------------------

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


def _commit(tmp: Path, path: Path) -> None:
    """Make a fully written temp file durable and visible under its final name."""
    _fsync(tmp)
    os.replace(tmp, path)
    _fsync(path.parent)


def write_atomic(path: Path, write: Any) -> Path:
    """Call `write(tmp_path)`, then fsync and rename to `path`: readers see the whole file or nothing."""
    tmp = _temp_path(path.parent)
    try:
        write(tmp)
        _commit(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise StoreError(f"could not write {path}: {e}", fix="check free disk space and permissions") from e
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def _sweep_temps(directory: Path) -> None:
    """Remove temp files left by killed writers on this host (a live writer's file is left alone)."""
    for tmp in directory.glob(".*.tmp"):
        host, _, rest = tmp.name[1:].partition("-")
        pid = rest.partition("-")[0]
        if host == _HOST and pid.isdigit() and not _alive(int(pid)):
            tmp.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _shard_name(token: str, seq: int) -> str:
    now = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"{int(now % 1 * 1e6):06d}Z"
    return f"{stamp}-{_HOST}-{os.getpid()}-{token}-{seq:06d}.parquet"


def _compress(data: bytes) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as out:
        out.write(data)
    return sink.getvalue().to_pybytes()


def _decompress(blob: bytes) -> bytes:
    with pa.CompressedInputStream(pa.BufferReader(blob), "zstd") as f:
        return f.read()


# --- writing --------------------------------------------------------------------------------------


class Writer:
    """Buffers episodes and verdicts and writes each flush as new shards that no other writer touches.

    Flushes when `flush_every` rows are buffered, when the oldest buffered row is `flush_interval_s`
    old (a background thread checks), and on `flush()`/`close()`. Thread-safe; use one per process.
    A failed background flush is raised by the next call.
    """

    def __init__(self, store: Store, flush_every: int = 512, flush_interval_s: float = 30.0):
        self.store = store
        self.flush_every = flush_every
        self.flush_interval_s = flush_interval_s
        self.shards_written = 0
        self._token = secrets.token_hex(4)
        self._pid = os.getpid()
        self._buffers: dict[str, list[tuple[Any, tuple[str, ...]]]] = {"episodes": [], "verdicts": []}
        self._oldest: float | None = None
        self._error: BaseException | None = None
        self._closed = False
        self._lock = threading.RLock()
        self._stop = threading.Event()
        for name in ("episodes", "verdicts"):
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
        self._buffer("episodes", episode, episode_json(episode))

    def add_verdict(self, verdict: Verdict) -> None:
        self._buffer("verdicts", verdict, verdict_json(verdict))

    def _buffer(self, table: str, item: Episode | Verdict, texts: tuple[str, ...]) -> None:
        with self._lock:
            self._check()
            buffer = self._buffers[table]
            buffer.append((item, texts))
            self._oldest = self._oldest or time.monotonic()
            if len(buffer) >= self.flush_every:
                self._flush()

    def flush(self) -> None:
        """Write everything buffered; when this returns, it survives a crash."""
        with self._lock:
            self._check()
            self._flush()

    def close(self) -> None:
        if self._closed:
            return
        self._stop.set()
        if threading.current_thread() is not self._timer:
            self._timer.join()
        atexit.unregister(self.close)
        with self._lock:
            try:
                self._check()
                if os.getpid() == self._pid:
                    self._flush()
            finally:
                self._closed = True

    def _check(self) -> None:
        if self._closed:
            raise StoreError("this store writer is closed")
        if os.getpid() != self._pid:
            raise StoreError("a store Writer cannot be used across fork", fix="create one Writer per process")
        if self._error is not None:
            error, self._error = self._error, None
            raise StoreError(f"a background flush failed: {error}") from error

    def _flush(self) -> None:
        for table, rows in self._buffers.items():
            if rows:
                items, texts = zip(*rows, strict=True)
                to_table = episodes_table if table == "episodes" else verdicts_table
                self._write(table, to_table(list(items), list(texts)))
                rows.clear()  # only once written: a failed write keeps the rows for the next try
        self._oldest = None

    def _write(self, table: str, data: pa.Table) -> None:
        self.shards_written += 1
        path = self.store.path / table / _shard_name(self._token, self.shards_written)
        write_atomic(path, lambda tmp: pq.write_table(data, tmp, **_options(table)))

    def _flush_on_time(self) -> None:
        while not self._stop.wait(min(1.0, self.flush_interval_s / 4)):
            with self._lock:
                if self._oldest is None or time.monotonic() - self._oldest < self.flush_interval_s:
                    continue
                try:
                    self._flush()
                except Exception as e:  # raised to the owner on its next call
                    self._error = e
                    log.error("store: background flush failed: %s", e)


def _options(table: str) -> dict[str, Any]:
    names = set(SCHEMAS[table].names)
    options = dict(_WRITE_OPTIONS)
    options["use_dictionary"] = [n for n in _DICTIONARY if n in names]
    options["write_statistics"] = [n for n in _WRITE_OPTIONS["write_statistics"] if n in names]
    options["column_encoding"] = {
        k: v for k, v in _WRITE_OPTIONS["column_encoding"].items() if k.split(".")[0] in names
    }
    return options


# --- the store ------------------------------------------------------------------------------------


class Store:
    """A run directory: write with `writer()`, read with `episodes()`, `groups()`, `done()`, `summary()`."""

    def __init__(self, path: str | Path, create: bool = False):
        self.path = Path(path)
        if create:
            for name in ("episodes", "verdicts", "artifacts"):
                (self.path / name).mkdir(parents=True, exist_ok=True)
        elif not (self.path / "episodes").is_dir():
            raise StoreError(
                f"{self.path} is not a ptrain run directory (it has no episodes/ folder)",
                fix="check the path; a rollout creates the run directory",
            )
        self.quarantined: list[Quarantined] = []
        self._checked: set[Path] = set()

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    def writer(self, flush_every: int = 512, flush_interval_s: float = 30.0) -> Writer:
        return Writer(self, flush_every=flush_every, flush_interval_s=flush_interval_s)

    # artifacts

    def put_artifact(self, data: bytes) -> str:
        """Store a blob once by its sha256 (the content's, before compression) and return the digest."""
        digest = hashlib.sha256(data).hexdigest()
        path = self._artifact_path(digest)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            blob = _compress(data)
            tmp = _temp_path(self.path / "artifacts")
            try:
                tmp.write_bytes(blob)
                _commit(tmp, path)
            except OSError as e:
                tmp.unlink(missing_ok=True)
                raise StoreError(f"could not write artifact {path}: {e}", fix="check free disk space") from e
        return digest

    def artifact(self, sha256: str) -> bytes:
        path = self._artifact_path(sha256)
        try:
            data = _decompress(path.read_bytes())
        except FileNotFoundError:
            raise StoreError(f"no artifact {sha256} in {self.path / 'artifacts'}") from None
        except (OSError, pa.ArrowException) as e:
            raise StoreError(f"artifact {path} is damaged: {e}") from e
        if hashlib.sha256(data).hexdigest() != sha256:
            raise StoreError(f"artifact {path} is damaged: its content no longer matches its sha256")
        return data

    def _artifact_path(self, sha256: str) -> Path:
        return self.path / "artifacts" / sha256[:2] / f"{sha256}.zst"

    # shards

    def shards(self, table: str) -> list[Path]:
        """The table's readable shards, oldest first; damaged ones are quarantined on the way."""
        directory = self.path / table
        paths = (
            sorted(p for p in directory.glob("*.parquet") if not p.name.startswith(".")) if directory.is_dir() else []
        )
        return [p for p in paths if p in self._checked or self._check(p, table)]

    def _check(self, path: Path, table: str) -> bool:
        try:
            metadata = pq.read_metadata(path).metadata or {}
        except FileNotFoundError:
            return False  # moved aside by another reader
        except (OSError, pa.ArrowException) as e:
            return self._quarantine(path, table, f"unreadable footer: {e}")
        version = metadata.get(b"ptrain.schema_version", b"").decode()
        if metadata.get(b"ptrain.table", b"").decode() != table or not version.isdigit():
            return self._quarantine(path, table, f"not a ptrain {table} shard")
        if int(version) > SCHEMA_VERSION:
            raise StoreError(
                f"{path} was written with store schema {version}; this ptrain reads up to {SCHEMA_VERSION}",
                fix="upgrade ptrain (pip install -U ptrain) to read this run",
            )
        self._checked.add(path)
        return True

    def _read(self, path: Path, table: str, columns: list[str] | None = None) -> pa.Table | None:
        try:
            with pq.ParquetFile(path, page_checksum_verification=True) as f:
                return f.read(columns=columns)
        except FileNotFoundError:
            self._warn(f"shard {path} disappeared while reading (moved aside by another reader?)")
        except (OSError, pa.ArrowException) as e:
            self._quarantine(path, table, f"unreadable data: {e}")
        return None

    def _quarantine(self, path: Path, table: str, reason: str) -> bool:
        self._checked.discard(path)
        destination: Path | None = self.path / "quarantine" / table / path.name
        try:
            destination.parent.mkdir(parents=True, exist_ok=True)
            if destination.exists():
                destination = destination.with_name(f"{path.stem}.{secrets.token_hex(3)}{path.suffix}")
            os.replace(path, destination)
        except OSError:
            destination = None
        self.quarantined.append(Quarantined(path, destination, reason))
        self._warn(
            f"damaged shard {path}: {reason}; " + (f"moved to {destination}" if destination else "left in place")
        )
        return False

    def _warn(self, message: str) -> None:
        log.warning("store: %s", message)
        warnings.warn(message, StoreWarning, stacklevel=3)

    def _scan(
        self, columns: list[str], query: Query, verdicts: dict[str, Verdict] | None = None
    ) -> Iterator[tuple[int, Path, pa.Table]]:
        """(shard index, path, selected rows of `columns`) for every readable episode shard."""
        read = list(dict.fromkeys(columns + query.columns))
        for i, path in enumerate(self.shards("episodes")):
            table = self._read(path, "episodes", read)
            if table is not None:
                yield i, path, table.filter(query.mask(table, verdicts)).select(columns)

    # reading

    def latest_verdicts(self) -> dict[str, Verdict]:
        """The newest verdict of every verified episode (by verified_at; a later shard wins a tie)."""
        latest: dict[str, Verdict] = {}
        for path in self.shards("verdicts"):
            table = self._read(path, "verdicts")
            for verdict in verdicts_from_table(table) if table is not None else ():
                current = latest.get(verdict.episode_id)
                if current is None or verdict.verified_at >= current.verified_at:
                    latest[verdict.episode_id] = verdict
        return latest

    def episodes(self, **filters: Any) -> Iterator[Episode]:
        """Every stored episode that matches `Query(**filters)`, shard by shard."""
        query = Query(**filters)
        verdicts = self.latest_verdicts() if query.by_reward else None
        for _, path, selected in self._scan(["episode_id"], query, verdicts):
            if selected.num_rows:
                yield from self._episodes_in(path, set(selected["episode_id"].to_pylist()))

    def _episodes_in(self, path: Path, episode_ids: set[str]) -> list[Episode]:
        table = self._read(path, "episodes")
        if table is None:
            return []
        keep = [i for i, e in enumerate(table["episode_id"].to_pylist()) if e in episode_ids]
        return episodes_from_table(table if len(keep) == table.num_rows else table.take(keep))

    def episode(self, episode_id: str) -> Episode:
        """One episode by its id or a unique prefix of it."""
        found = []
        for _, path, table in self._scan(["episode_id"], Query()):
            found += [(path, e) for e in table["episode_id"].to_pylist() if e.startswith(episode_id)]
        if len(found) != 1:
            what = "no episode" if not found else f"{len(found)} episodes"
            raise StoreError(f"{what} in {self.path} with an id starting {episode_id!r}", fix="give more of the id")
        path, full_id = found[0]
        return self._episodes_in(path, {full_id})[0]

    def done(self, **filters: Any) -> set[tuple[str, int]]:
        """The (task_id, sample_index) pairs already stored: what a resumed stage skips."""
        query = Query(**filters)
        verdicts = self.latest_verdicts() if query.by_reward else None
        pairs: set[tuple[str, int]] = set()
        for _, _, table in self._scan(["task_id", "sample_index"], query, verdicts):
            pairs.update(zip(table["task_id"].to_pylist(), table["sample_index"].to_pylist(), strict=True))
        return pairs

    def summary(self, **filters: Any) -> pa.Table:
        """One row per episode: the scalar columns and the latest reward/passed (null if unverified)."""
        query = Query(**filters)
        verdicts = self.latest_verdicts()
        tables = [t for _, _, t in self._scan(META_COLUMNS, query, verdicts)]
        table = pa.concat_tables(tables) if tables else EPISODE_SCHEMA.empty_table().select(META_COLUMNS)
        joined = [verdicts.get(e) for e in table["episode_id"].to_pylist()]
        table = table.append_column("reward", pa.array([v.reward if v else None for v in joined], _F64))
        return table.append_column("passed", pa.array([v.passed if v else None for v in joined], pa.bool_()))

    def groups(self, include_incomplete: bool = False, **filters: Any) -> Iterator[Group]:
        """Complete GRPO groups (every sample of a group id), each with its latest verdicts.

        Memory stays bounded: a first pass reads only the small id columns to learn where each group
        ends; the second reads one shard at a time and yields each group as soon as its last sample
        has been read, so only groups that span shards are held. Filters must be ones a whole group
        shares (split, taskpack, task_id, policy versions). Incomplete groups are counted in a
        warning and skipped unless `include_incomplete`; a duplicate (group, sample) keeps the first.
        """
        query = Query(**filters)
        if query.status is not None or query.by_reward:
            raise StoreError("groups() keeps groups whole: filter by split, taskpack, task_id or policy version")
        members: dict[str, dict[int, tuple[int, str]]] = {}  # group -> sample -> (shard, episode id)
        sizes: dict[str, int] = {}
        duplicates = 0
        for i, _, table in self._scan(["episode_id", "group_id", "sample_index", "group_size"], query):
            columns = [table[c].to_pylist() for c in ("episode_id", "group_id", "sample_index", "group_size")]
            for episode_id, group_id, sample, size in zip(*columns, strict=True):
                samples = members.setdefault(group_id, {})
                duplicates += sample in samples
                samples.setdefault(sample, (i, episode_id))
                sizes.setdefault(group_id, size)
        if duplicates:
            self._warn(f"{duplicates} episodes repeat a (group, sample) already stored; the first of each is used")
        incomplete = [g for g, samples in members.items() if len(samples) < sizes[g]]
        if incomplete:
            log.warning("store: %d of %d groups are incomplete%s", len(incomplete), len(members),
                        "" if include_incomplete else " and skipped")  # fmt: skip
        wanted = members if include_incomplete else {g: s for g, s in members.items() if len(s) == sizes[g]}
        ends: dict[int, list[str]] = {}
        by_shard: dict[int, set[str]] = {}
        for group_id, samples in wanted.items():
            ends.setdefault(max(i for i, _ in samples.values()), []).append(group_id)
            for i, episode_id in samples.values():
                by_shard.setdefault(i, set()).add(episode_id)
        verdicts = self.latest_verdicts()
        shards = self.shards("episodes")
        pending: dict[str, dict[int, Episode]] = {}
        for i in sorted(by_shard):
            for episode in self._episodes_in(shards[i], by_shard[i]):
                pending.setdefault(episode.group_id, {})[episode.sample_index] = episode
            for group_id in ends.get(i, ()):
                samples = pending.pop(group_id, {})
                if len(samples) < len(wanted[group_id]):  # a shard turned out damaged (already warned)
                    continue
                ordered = tuple(samples[s] for s in sorted(samples))
                yield Group(group_id, ordered, tuple(verdicts.get(e.episode_id) for e in ordered))

    def disk_usage(self) -> dict[str, tuple[int, int]]:
        """(files, bytes) per folder of the run directory; temp files of unfinished writes counted apart."""
        usage = {}
        for name in ("episodes", "verdicts", "artifacts", "quarantine"):
            files = [p for p in (self.path / name).rglob("*") if p.is_file()]
            usage[name] = (sum(not p.name.startswith(".") for p in files), sum(p.stat().st_size for p in files))
        temps = [p for name in ("episodes", "verdicts", "artifacts") for p in (self.path / name).glob(".*.tmp")]
        usage["temp"] = (len(temps), sum(p.stat().st_size for p in temps))
        return usage


# --- export ---------------------------------------------------------------------------------------


def _utf8(text: str) -> str:
    """Text any UTF-8 consumer accepts: undecodable bytes (lone surrogates) become U+FFFD."""
    try:
        text.encode()
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _message(message: dict[str, Any]) -> dict[str, str]:
    content = message.get("content", "")
    return {
        "role": str(message.get("role", "")),
        "content": _utf8(content if isinstance(content, str) else json.dumps(content)),
    }


def export_jsonl(store: Store, path: str | Path, **filters: Any) -> int:
    """Chat-format JSONL for supervised fine-tuning: {"messages": [...], ids, reward} per episode."""
    verdicts = store.latest_verdicts()

    def write(tmp: Path) -> None:
        nonlocal count
        with open(tmp, "w", encoding="utf-8") as f:
            for e in store.episodes(**filters):
                v = verdicts.get(e.episode_id)
                row = {"messages": [_message(m) for m in e.transcript], "episode_id": e.episode_id,
                       "task_id": e.task_id, "split": e.split, "status": e.status,
                       "reward": v.reward if v else None, "passed": v.passed if v else None}  # fmt: skip
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
                count += 1

    count = 0
    write_atomic(Path(path), write)
    return count


EXPORT_SCHEMA = pa.schema(
    [f for f in EPISODE_SCHEMA if f.name not in ("transcript", "timings", "metadata")]
    + [pa.field("messages", pa.list_(pa.struct([("role", _STR), ("content", _STR)]))),
       pa.field("reward", _F64), pa.field("passed", pa.bool_())]
)  # fmt: skip


def export_parquet(store: Store, path: str | Path, **filters: Any) -> int:
    """One plain Parquet file (messages as role/content structs, reward joined) for any reader."""
    verdicts = store.latest_verdicts()
    count = 0

    def write(tmp: Path) -> None:
        nonlocal count
        with pq.ParquetWriter(tmp, EXPORT_SCHEMA, compression="zstd") as out:
            batch: list[Episode] = []
            for episode in store.episodes(**filters):
                batch.append(episode)
                if len(batch) == 512:
                    out.write_table(_export_table(batch, verdicts))
                    count += len(batch)
                    batch = []
            if batch or not count:
                out.write_table(_export_table(batch, verdicts))
                count += len(batch)

    write_atomic(Path(path), write)
    return count


def _export_table(batch: list[Episode], verdicts: dict[str, Verdict]) -> pa.Table:
    table = episodes_table(batch)
    joined = [verdicts.get(e.episode_id) for e in batch]
    columns = {name: table[name] for name in EXPORT_SCHEMA.names if name in table.column_names}
    columns["messages"] = [[_message(m) for m in e.transcript] for e in batch]
    columns["reward"] = [v.reward if v else None for v in joined]
    columns["passed"] = [v.passed if v else None for v in joined]
    return pa.table(columns, schema=EXPORT_SCHEMA)
