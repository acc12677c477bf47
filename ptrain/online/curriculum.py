"""A curriculum for online training: which tasks a round rolls out, from what the run has learned so far.

GRPO learns only from groups whose samples disagree: a task the policy always fails or always passes
gives no gradient and costs a whole group of episodes. So the curriculum keeps a running pass-rate
estimate per task (a Beta posterior whose old evidence decays each policy version, so the estimate
follows the policy; a shaped reward in [0, 1] counts as that fraction of a pass), and per category and
tier; a round draws its tasks from the unlocked tiers, weighted by p(1-p), the variance of a sample's
reward and so the expected signal. An unseen task takes its category's estimate in its tier (the mean
of the seen ones, shrunk toward 1/2 by one pass and one fail), so a category the policy cannot reach
stops soaking up draws long before each of its tasks has been tried. A task measured at 0 or 1 (a
whole group agreeing, the estimate past `settled`) keeps a small floor weight, so it is tried again
later, when the policy has moved.

Tiers are the taskpack's difficulties (easy, medium, hard), and each category climbs its own ladder,
since a taskpack grades difficulty within a category (terminal-coding's easy bug fixes are out of a
small model's reach while its medium shell tasks are learned). A category starts on its easiest tier
in the pool; its next tier unlocks once the open one is learned: over at least `min_seen` of its tasks
within reach (not settled at 0), their mean estimate reaches `promote_at`. Tasks settled at 0 stay out
of that mean and are retried at the floor weight. Unlocking is for good: a later dip does not lock a
tier again.

Pure: it reads groups (from the store) and returns task ids. Rebuilt from the store on resume
(`observe` every stored group of the pool older than the current policy, in policy-version order), it
draws the same tasks again, since a round's draw is seeded by (seed, round); the exception is a run
whose last rounds took no step (no signal), whose evidence shares the current policy version and is
left out of the rebuild, so the resumed round may draw other tasks (the stored episodes stay, unused).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ptrain.taskpack import DIFFICULTIES, Task


@dataclass
class Estimate:
    """A task's pass rate: Beta(1 + passes, 1 + fails), old evidence decayed per policy version."""

    passes: float = 0.0
    fails: float = 0.0
    version: int = -1  # the policy version of the latest evidence

    @property
    def rate(self) -> float:
        return (1.0 + self.passes) / (2.0 + self.passes + self.fails)

    @property
    def seen(self) -> float:
        return self.passes + self.fails


@dataclass
class Curriculum:
    tasks: Sequence[Task]
    seed: int = 0
    promote_at: float = 0.75  # unlock the next tier when its tasks within reach have a mean estimate this high
    min_seen: int = 4  # ... over at least this many tasks seen
    decay: float = 0.7  # evidence kept per policy version: the estimate follows the policy
    settled: float = 0.15  # an estimate within this of 0 or 1 counts as learned (or out of reach) for now
    floor: float = 0.02  # the weight a settled task keeps, so it is tried again later
    estimates: dict[str, Estimate] = field(default_factory=dict)
    unlocked: dict[str, int] = field(default_factory=dict)  # category -> index of its highest open tier
    skipped: dict[str, int] = field(default_factory=dict)  # why tasks were passed over in the last draw

    def __post_init__(self) -> None:
        self.by_id = {task.id: task for task in self.tasks}
        self.ladder = [tier for tier in DIFFICULTIES if any(t.difficulty == tier for t in self.tasks)]
        if not self.ladder:
            raise ValueError("a curriculum needs tasks")
        self.ladders = {c: [tier for tier in self.ladder if any(t.category == c and t.difficulty == tier for t in self.tasks)]
                        for c in sorted({t.category for t in self.tasks})}  # fmt: skip
        for category in self.ladders:
            self.unlocked.setdefault(category, 0)

    def observe(self, task_id: str, passed: Iterable[bool | float], policy_version: int) -> None:
        """One group's outcomes for a task, sampled at `policy_version`: each sample passed or not, or its
        reward in [0, 1] (a shaped reward counts as that fraction of a pass)."""
        if task_id not in self.by_id:
            return
        est = self.estimates.setdefault(task_id, Estimate())
        if est.version >= 0 and policy_version > est.version:
            kept = self.decay ** (policy_version - est.version)
            est.passes, est.fails = est.passes * kept, est.fails * kept
        for ok in passed:
            x = min(max(float(ok), 0.0), 1.0)
            est.passes += x
            est.fails += 1.0 - x
        est.version = max(est.version, policy_version)
        self._promote(self.by_id[task_id].category)

    def _promote(self, category: str) -> None:
        """Unlock a category's next tier once its open one is learned: the mean estimate of its seen tasks
        within reach (not settled at 0) at `promote_at`, over `min_seen` of them (or all it has)."""
        ladder = self.ladders[category]
        while self.unlocked[category] + 1 < len(ladder):
            tier = ladder[self.unlocked[category]]
            top = [t for t in self.tasks if t.category == category and t.difficulty == tier]
            reach = [p for t in top if t.id in self.estimates and (p := self.estimates[t.id].rate) > self.settled]
            if len(reach) < min(self.min_seen, len(top)) or sum(reach) / len(reach) < self.promote_at:
                return
            self.unlocked[category] += 1

    def open_tier(self, category: str) -> str:
        return self.ladders[category][self.unlocked[category]]

    def open_tasks(self) -> list[Task]:
        """The tasks of each category's unlocked tiers."""
        return [t for t in self.tasks
                if self.ladders[t.category].index(t.difficulty) <= self.unlocked[t.category]]  # fmt: skip

    def rate(self, task_id: str) -> float | None:
        est = self.estimates.get(task_id)
        return est.rate if est else None

    def weight(self, task_id: str, priors: dict[tuple[str, str], float] | None = None) -> tuple[float, str]:
        """How much a draw favours a task, and why (unseen, learnable, or settled at 0 or 1)."""
        est = self.estimates.get(task_id)
        if est is None:
            task = self.by_id[task_id]
            p = (priors if priors is not None else self.priors()).get((task.category, task.difficulty), 0.5)
            return p * (1.0 - p), "unseen"
        p = est.rate
        if p <= self.settled:
            return self.floor, "settled at 0"
        if p >= 1.0 - self.settled:
            return self.floor, "settled at 1"
        return p * (1.0 - p), "learnable"

    def priors(self) -> dict[tuple[str, str], float]:
        """An unseen task's estimate by (category, tier): the evidence of the seen ones there pooled, as if
        they were one task (1/2 where none is seen)."""
        pooled: dict[tuple[str, str], Estimate] = {}
        for task_id, est in self.estimates.items():
            task = self.by_id[task_id]
            into = pooled.setdefault((task.category, task.difficulty), Estimate())
            into.passes, into.fails = into.passes + est.passes, into.fails + est.fails
        return {key: est.rate for key, est in pooled.items()}

    def pick(self, k: int, round_no: int, exclude: Iterable[str] = (), refill: int = -1) -> tuple[str, ...]:
        """`k` distinct tasks for round `round_no` (or its refill number `refill`) from the unlocked
        tiers, weighted draws without replacement, seeded by (seed, round, refill); `skipped` counts
        the settled tasks passed over."""
        rng = random.Random(f"{self.seed}:curriculum:{round_no}:{refill}")
        priors, excluded = self.priors(), set(exclude)
        left = {t.id: self.weight(t.id, priors) for t in self.open_tasks() if t.id not in excluded}
        chosen: list[str] = []
        while left and len(chosen) < k:
            ids = sorted(left)
            pick = rng.choices(ids, weights=[left[i][0] for i in ids])[0]
            chosen.append(pick)
            del left[pick]
        self.skipped = {}
        for _, why in left.values():
            if why.startswith("settled"):
                self.skipped[why] = self.skipped.get(why, 0) + 1
        return tuple(chosen)

    def snapshot(self) -> dict:
        """Per tier and category: tasks seen and mean estimated pass rate; the highest tier open in any
        category (`tier`), the categories past their first tier (`climbed`); the draw's skips; each seen task's estimate (the
        report's "tasks by pass rate over time")."""

        def summary(tasks: list[Task]) -> dict:
            rates = [self.estimates[t.id].rate for t in tasks if t.id in self.estimates]
            return {"tasks": len(tasks), "seen": len(rates), "pass_rate": sum(rates) / len(rates) if rates else None}

        tiers = {tier: summary([t for t in self.tasks if t.difficulty == tier]) for tier in self.ladder}
        categories = sorted({t.category for t in self.tasks})
        by_category = {c: summary([t for t in self.tasks if t.category == c]) for c in categories}
        rates = {task_id: round(est.rate, 3) for task_id, est in sorted(self.estimates.items())}
        highest = max((self.open_tier(c) for c in self.ladders), key=self.ladder.index)
        climbed = {c: self.open_tier(c) for c in self.ladders if self.unlocked[c] > 0}
        return {"tier": highest, "climbed": climbed, "tiers": tiers, "categories": by_category,
                "skipped": dict(self.skipped), "rates": rates}  # fmt: skip


def rebuilt(curriculum: Curriculum, groups: Iterable) -> Curriculum:
    """The curriculum after every stored group (a resumed run's), observed in policy-version order."""
    rows = sorted(((g.episodes[0].policy_version, g.task_id, [v.reward for v in g.verdicts if v is not None])
                   for g in groups), key=lambda row: row[0])  # fmt: skip
    for version, task_id, passed in rows:
        curriculum.observe(task_id, passed, version)
    return curriculum
