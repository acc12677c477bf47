"""What a rollout did: the counts and times that the progress display, the metrics file and the CLI's summary show.

The scheduler (ptrain/rollout/scheduler.py) fills one `RolloutReport` as episodes and verdicts are
stored; on Ray, ptrain/scale/workers.py merges the workers' reports into one of the same shape.
`as_dict` is the summary, with its rates (episodes a minute, tokens a second, the engine's busy
fraction) derived there from the counts, never stored twice.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class RolloutReport:
    """What a rollout did, for the progress display, the metrics file and the CLI's summary."""

    planned: int = 0  # episodes this run set out to produce
    skipped: int = 0  # already in the store
    statuses: Counter = field(default_factory=Counter)
    finishes: Counter = field(default_factory=Counter)
    infra_retries: int = 0
    infra_retried_from_store: int = 0  # (task, sample) pairs an earlier run lost to infrastructure, run again
    errors: list[str] = field(default_factory=list)
    verified: int = 0
    passed: int = 0
    reward_sum: float = 0.0
    verify_errors: int = 0
    model_tokens: int = 0
    tool_s: float = 0.0
    wall_s: float = 0.0  # set when the rollout ends
    started: float | None = None  # time.monotonic() at its start: a running rollout's rates are over the time so far
    engine_busy_s: float = 0.0
    demand_s: float = 0.0  # seconds with at least one episode waiting on the engine

    @property
    def finished(self) -> int:
        return sum(self.statuses.values())

    def elapsed(self) -> float:
        """The rollout's wall time: all of it once it ended, so far while it runs, 0 before it starts."""
        if self.wall_s or self.started is None:
            return self.wall_s
        return time.monotonic() - self.started

    def as_dict(self) -> dict[str, Any]:
        wall = self.elapsed()
        rate = (lambda x: x / wall) if wall > 0 else (lambda x: None)  # noqa: E731  no time yet: no rate
        return {
            "planned": self.planned,
            "skipped": self.skipped,
            "finished": self.finished,
            "statuses": dict(self.statuses),
            "finishes": dict(self.finishes),
            "infra_retries": self.infra_retries,
            "infra_retried_from_store": self.infra_retried_from_store,
            "verified": self.verified,
            "passed": self.passed,
            "mean_reward": self.reward_sum / self.verified if self.verified else None,
            "verify_errors": self.verify_errors,
            "model_tokens": self.model_tokens,
            "wall_s": wall,
            "episodes_per_min": rate(60 * self.finished),
            "tokens_per_s": rate(self.model_tokens),
            "tool_s": self.tool_s,
            "engine_busy_s": self.engine_busy_s,
            "demand_s": self.demand_s,
            "engine_busy_fraction": self.engine_busy_s / self.demand_s if self.demand_s else None,
            "engine_utilisation": rate(self.engine_busy_s),
        }
