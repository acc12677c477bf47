"""An episode row: one rollout of one task, token in and token out, as every stage stores and reads it;
its verdicts; and the Arrow schema and Parquet encodings they are stored in.

    Episode        the rollout: token ids, loss mask, behaviour logprobs, transcript, tool calls, status
    StoredVerdict  a verifier's score for one episode, as stored; a later one supersedes it
    Group          the samples of one GRPO group, with their latest verdicts
    Query          which episodes to read: filters over the small columns

Why these encodings:
- Tokens as arrays, the rest as JSON. The trainer needs token ids, mask and logprobs exactly as
  sampled, so they are list columns (int32, bool, float32), never re-tokenized; transcript, tool
  calls, timings and metadata are free-form JSON text (lone surrogates from non-UTF-8 tool output
  kept as \\u escapes, so they round-trip).
- Small columns for listings. num_tokens, model_tokens and prompt_tokens are derived from the mask
  when written, so a listing (`Store.summary()`) counts tokens without reading the token columns.
- Each column the encoding that suits it (measured by scripts/bench_store.py): dictionaries for
  repeated strings, plain int32 token ids (zstd finds the repeated runs), byte-stream-split float32
  logprobs (bit for bit), run-length booleans for the mask, JSON text at a higher zstd level.
- Versioned. Every table carries `ptrain.schema_version` and `ptrain.table` in its schema metadata;
  a change to the columns must bump SCHEMA_VERSION, so that an older reader refuses a newer shard
  instead of misreading it.
- Checked when made. Rows validate themselves (array lengths and dtypes, status, reward in [0, 1])
  and a writer encodes the JSON in `add`, so a bad episode fails where it is made, not at a flush.

Writing them to shards and reading them back is ptrain/store.py.
"""

from __future__ import annotations

import json
import math
import re
import time
import uuid
from collections.abc import Collection
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ptrain.errors import PtrainError

SCHEMA_VERSION = 1
STATUSES = ("ok", "truncated", "timeout", "error")


class StoreError(PtrainError):
    """A row is malformed, or the run directory cannot be read or written as asked."""


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
class StoredVerdict:
    """A verifier's score for one episode, as stored; a later verdict for the same episode supersedes it.

    It is a `ptrain.taskpack.Verdict` (what a verifier returns) plus which episode it scored and when.
    """

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
    verdicts: tuple[StoredVerdict | None, ...]

    @property
    def task_id(self) -> str:
        return self.episodes[0].task_id

    @property
    def rewards(self) -> np.ndarray:
        """Rewards in sample order; NaN where an episode has no verdict yet."""
        return np.array([v.reward if v else np.nan for v in self.verdicts], dtype=np.float64)


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

    def mask(self, table: pa.Table, verdicts: dict[str, StoredVerdict] | None) -> np.ndarray:
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


def verdicts_table(verdicts: list[StoredVerdict], texts: list[tuple[str, ...]] | None = None) -> pa.Table:
    columns = {f.name: [getattr(v, f.name) for v in verdicts] for f in fields(StoredVerdict)}
    columns["details"] = [t[0] for t in texts] if texts is not None else [verdict_json(v)[0] for v in verdicts]
    return pa.table(columns, schema=_versioned(VERDICT_SCHEMA, "verdicts"))


def verdict_json(verdict: StoredVerdict) -> tuple[str, ...]:
    return (_dumps(verdict.details, f"verdict for {verdict.episode_id} details"),)


def verdicts_from_table(table: pa.Table) -> list[StoredVerdict]:
    return [StoredVerdict(**{**row, "details": json.loads(row["details"])}) for row in table.to_pylist()]
