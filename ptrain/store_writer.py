"""Writing the trajectory store: atomic files under names no two writers share, and the buffered `Writer`.

Every file of a run directory (episode and verdict shards, artifacts, exported copies) is written
the same way: under a dot-name in its own folder, fsynced, renamed, and the folder fsynced, so a
reader sees a whole file or none and a crash leaves at most a temp file (swept by the next writer on
the same host). `Writer` buffers rows and flushes them as new shards, by count, by age and on close.

The reading side, and the layout of the run directory, are in ptrain/store.py; this file is the
half a newcomer needs only to change how files reach the disk.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import secrets
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq

from ptrain.episode import (
    WRITE_OPTIONS,
    Episode,
    StoredVerdict,
    StoreError,
    episode_json,
    episodes_table,
    verdict_json,
    verdicts_table,
)

if TYPE_CHECKING:
    from ptrain.store import Store

log = logging.getLogger("ptrain.store")


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

    def add_verdict(self, verdict: StoredVerdict) -> None:
        self._add("verdicts", verdict, verdict_json(verdict))

    def _add(self, table: str, item: Episode | StoredVerdict, texts: tuple[str, ...]) -> None:
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
