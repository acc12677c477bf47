"""Where the time goes in a rollout: how many episodes are in each phase, integrated over time.

Each episode is always in one phase: "setup" (sandbox and task), "generate" (waiting on the
engine), "tools" (its calls running), "verify". The meter integrates the count in each phase over
time, so that, with the engine's own busy time, a run can say the one number that matters for
async rollout: of the time at least one episode was waiting on the engine (`demand_s`), how much
did the engine spend generating (`busy_fraction`)? A snapshot per second goes to the run's
metrics file for the report's plots.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PHASES = ("setup", "generate", "tools", "verify")


@dataclass
class Meter:
    now: float = field(default_factory=time.monotonic)
    started: float = 0.0
    counts: Counter = field(default_factory=Counter)  # phase -> episodes in it now
    episode_s: Counter = field(default_factory=Counter)  # phase -> episode-seconds spent in it
    any_s: Counter = field(default_factory=Counter)  # phase -> seconds with at least one episode in it

    def __post_init__(self) -> None:
        self.started = self.now

    def _advance(self) -> None:
        now = time.monotonic()
        dt, self.now = now - self.now, now
        for phase, count in self.counts.items():
            if count:
                self.episode_s[phase] += count * dt
                self.any_s[phase] += dt

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        self._advance()
        self.counts[name] += 1
        try:
            yield
        finally:
            self._advance()
            self.counts[name] -= 1

    def snapshot(self) -> dict[str, float]:
        self._advance()
        return {
            "elapsed_s": self.now - self.started,
            **{f"in_{p}": float(self.counts[p]) for p in PHASES},
            **{f"{p}_episode_s": self.episode_s[p] for p in PHASES},
            "demand_s": self.any_s["generate"],
        }


class MetricsFile:
    """Append-only JSON lines in the run directory: one snapshot per interval, then the summary."""

    def __init__(self, run_dir: Path, stage: str):
        directory = run_dir / "metrics"
        directory.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.path = directory / f"{stage}-{stamp}.jsonl"
        self.file = self.path.open("a", buffering=1)

    def write(self, kind: str, values: dict[str, Any]) -> None:
        self.file.write(json.dumps({"kind": kind, "time": time.time(), **values}) + "\n")

    def close(self) -> None:
        self.file.close()
