"""The trajectory store: one run directory of immutable Parquet shards that every stage reads and writes.

    RUN/episodes/    one zstd Parquet shard per writer flush: <utc time>-<host>-<pid>-<token>-<seq>.parquet
    RUN/verdicts/    verdicts, in shards named the same way; re-verifying appends, readers take the latest
    RUN/artifacts/   large per-episode blobs (workspace tars) by content: ab/<sha256>.zst, each stored once
    RUN/quarantine/  shards that could not be read, moved aside with a warning that names them

The rows themselves (`Episode`, `StoredVerdict`), their schema and their column encodings are in
ptrain/episode.py; atomic writes and the buffered `Writer` are in ptrain/store_writer.py; this file
is the run directory and reading it.

Why this shape:
- Crash safety without locks. A flush writes its shard under a dot-name in the same folder, fsyncs
  it, renames it and fsyncs the folder: readers only ever see whole shards, and a crash loses at
  most a writer's unflushed buffer (flushed by count and by time). Shard names carry host, pid, a
  random token and a sequence number, so any number of writers (threads, processes, machines on a
  shared filesystem) never share a file.
- Independent stages. Verdicts are their own table: re-verifying appends and never rewrites an
  episode. `done()` tells a restarted stage which (task, sample) pairs exist, so it neither repeats
  nor loses work. `groups()` streams complete GRPO groups to the trainer in bounded memory.
- Plain files. Any Parquet reader (pyarrow, pandas, DuckDB, `datasets`) reads the shards. Every
  footer carries `ptrain.schema_version`; a shard from a newer schema is an error, not a misreading.
- Visible damage. A shard that cannot be read (pages carry checksums) is moved to quarantine/ with a
  `StoreWarning` naming it and recorded in `Store.quarantined`; everything else stays readable.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ptrain.episode import (
    EPISODE_SCHEMA,
    META_COLUMNS,
    SCHEMA_VERSION,
    Episode,
    Group,
    Query,
    StoredVerdict,
    StoreError,
    episodes_from_table,
    verdicts_from_table,
)
from ptrain.episode import STATUSES as STATUSES  # re-exported: the rows moved to ptrain/episode.py
from ptrain.store_writer import Writer, write_atomic

log = logging.getLogger(__name__)


class StoreWarning(UserWarning):
    """Something in the run directory was set aside (a damaged shard); the rest stays readable."""


@dataclass(frozen=True)
class Quarantined:
    """A shard that could not be read: where it was, where it went (None: it could not be moved), why."""

    original: Path
    path: Path | None
    reason: str


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
        warnings.warn(message, StoreWarning, stacklevel=3)  # one report: the CLI prints it as one line

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

    def latest_verdicts(self) -> dict[str, StoredVerdict]:
        """The newest verdict of every verified episode (by verified_at; on a tie, the later shard)."""
        latest: dict[str, StoredVerdict] = {}
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
        table = table.append_column("reward", pa.array([v.reward if v else None for v in joined], pa.float64()))
        return table.append_column("passed", pa.array([v.passed if v else None for v in joined], pa.bool_()))

    def groups(self, include_incomplete: bool = False, **filters: Any) -> Iterator[Group]:
        """Complete GRPO groups (every sample of a group id), each with its latest verdicts.

        Memory stays bounded: a first pass reads only the small id columns to learn in which shard
        each group ends; the second reads one shard at a time and yields each group as soon as its
        last sample is in, so only groups that span shards are held. Filters must be ones that a
        whole group shares (split, taskpack, task_id, policy version). Incomplete groups are counted
        in a warning and skipped unless asked for; a repeated (group, sample) keeps the first one,
        except that an episode retried after an infrastructure error replaces the error.
        """
        query = Query(**filters)
        if query.status is not None or query.by_reward:
            raise StoreError("groups() keeps groups whole: filter by split, taskpack, task_id or policy version")
        members: dict[str, dict[int, tuple[int, str]]] = {}  # group -> sample -> (shard, episode id)
        sizes: dict[str, int] = {}
        repeats = 0
        names = ["episode_id", "group_id", "sample_index", "group_size", "status"]
        shards = self.shards("episodes")  # one listing for both passes: shards written meanwhile wait
        errored: set[tuple[str, int]] = set()  # (group, sample) held only by an infrastructure error so far
        for i, _, table in self._scan(names, query, shards=shards):
            for episode_id, group_id, sample, size, status in zip(*(table[n].to_pylist() for n in names), strict=True):
                samples = members.setdefault(group_id, {})
                if (group_id, sample) in errored and status != "error":  # a resumed rollout's retry replaces it
                    errored.discard((group_id, sample))
                    samples[sample] = (i, episode_id)
                elif sample in samples:
                    repeats += status != "error" or (group_id, sample) not in errored
                else:
                    samples[sample] = (i, episode_id)
                    if status == "error":
                        errored.add((group_id, sample))
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
