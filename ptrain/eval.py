"""Evaluation metrics: pass@k, bootstrap intervals, breakdowns, and paired comparisons of two runs.

Everything here is a pure function of what an evaluation run stored (episodes and their verdicts),
so numbers can be recomputed from a run directory at any time:

    outcomes = task_outcomes(Store(run))           # one TaskOutcome per task
    summary = summarize(outcomes, ks=(1, 4))        # pass@1, pass@k, mean reward, by category, intervals
    diff = compare(task_outcomes(a), task_outcomes(b))   # paired bootstrap and McNemar on shared tasks

Why these statistics:
- pass@k is the unbiased estimator of Chen et al. (2021): with n samples of which c passed,
  1 - C(n-c, k) / C(n, k), averaged over tasks. pass@1 is then the mean pass rate per task.
- Intervals are percentile bootstraps over tasks (the unit that varies), 95% by default, with a
  fixed seed so a report is reproducible.
- A comparison pairs the two runs task by task (same tasks, often the same sampling seeds), which
  removes the between-task variance: the paired bootstrap resamples tasks and keeps each task's
  two results together. McNemar's exact test uses the discordant pass/fail pairs of matching
  (task, sample) episodes.
- Infrastructure failures (status "error": podman, the image, the engine, the verifier's harness)
  are not the model's: pass@k leaves them out, and beside it `pass@1 (all)` counts each as a 0 and
  the census gives their rate, so a run that lost many episodes cannot look better than it is. An
  error retried later by a resumed rollout (the same task and sample, stored again) no longer
  counts. The model's own failures (a workspace it made too large to collect, a shell it broke)
  are stored with a 0 verdict and scored like any other. An episode without a verdict is counted
  as unverified and left out.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ptrain.store import Store

CONFIDENCE = 0.95


@dataclass(frozen=True)
class TaskOutcome:
    """One task's evaluated samples: pass/fail and reward by sample index, and what they cost."""

    task_id: str
    category: str
    difficulty: str
    passed: dict[int, bool]  # sample index -> passed
    rewards: dict[int, float]
    tokens: tuple[int, ...] = ()  # all tokens per episode
    model_tokens: tuple[int, ...] = ()
    turns: tuple[int, ...] = ()
    wall_s: tuple[float, ...] = ()
    actions: tuple[int, ...] = ()  # tool calls other than submit, per episode

    @property
    def n(self) -> int:
        return len(self.passed)

    @property
    def c(self) -> int:
        return sum(self.passed.values())

    @property
    def pass_rate(self) -> float:
        return self.c / self.n

    @property
    def mean_reward(self) -> float:
        return float(np.mean(list(self.rewards.values())))


@dataclass
class Census:
    """What an evaluation run holds besides scored episodes: infrastructure errors and unverified ones."""

    episodes: int = 0
    scored: int = 0
    passed: int = 0  # scored episodes that passed
    infra_errors: Counter = field(default_factory=Counter)  # error type -> count (not retried since)
    retried: int = 0  # infrastructure errors whose (task, sample) a later episode holds
    unverified: int = 0
    official: dict[str, list[tuple[float, float]]] = field(default_factory=dict)  # metric -> (em, f1) per episode

    def official_metrics(self) -> dict[str, dict[str, float]]:
        """A benchmark's own metric where the verifier reports one (e.g. TAT-QA's exact match and F1)."""
        return {metric: {"episodes": len(v), "em": float(np.mean([e for e, _ in v])),
                         "f1": float(np.mean([f for _, f in v]))}
                for metric, v in sorted(self.official.items())}  # fmt: skip

    @property
    def infra_error_count(self) -> int:
        return sum(self.infra_errors.values())

    @property
    def pass_at_1_all(self) -> float | None:
        """Passed over every (task, sample) that ran to a score or failed as infrastructure (as a 0)."""
        n = self.scored + self.infra_error_count
        return self.passed / n if n else None

    @property
    def infra_error_rate(self) -> float | None:
        n = self.scored + self.infra_error_count + self.unverified
        return self.infra_error_count / n if n else None


def task_outcomes(store: Store, census: Census | None = None, **filters: Any) -> list[TaskOutcome]:
    """Every task's scored samples in the store (latest verdicts), sorted by task id."""
    census = census if census is not None else Census()
    verdicts = store.latest_verdicts()
    rows: dict[str, dict[str, Any]] = {}
    errors: dict[tuple[str, int], str] = {}  # (task, sample) -> error type, unless a later episode holds it
    held: set[tuple[str, int]] = set()
    for episode in store.episodes(**filters):
        census.episodes += 1
        key = (episode.task_id, episode.sample_index)
        if episode.status == "error":
            if key in held:
                census.retried += 1
            else:
                census.retried += key in errors
                errors[key] = episode.error_type
            continue
        if errors.pop(key, None) is not None:
            census.retried += 1
        held.add(key)
        verdict = verdicts.get(episode.episode_id)
        if verdict is None:
            census.unverified += 1
            continue
        census.scored += 1
        census.passed += bool(verdict.passed)
        official = verdict.details.get("official")
        if isinstance(official, dict) and "em" in official:
            metric = str(official.get("metric", "official"))
            census.official.setdefault(metric, []).append((float(official["em"]), float(official.get("f1", 0.0))))
        meta = episode.metadata
        row = rows.setdefault(episode.task_id, {"category": str(meta.get("category", "")),
                                                "difficulty": str(meta.get("difficulty", "")),
                                                "passed": {}, "rewards": {}, "tokens": [], "model_tokens": [],
                                                "turns": [], "wall_s": [], "actions": []})  # fmt: skip
        row["passed"][episode.sample_index] = bool(verdict.passed)
        row["rewards"][episode.sample_index] = float(verdict.reward)
        row["tokens"].append(episode.num_tokens)
        row["model_tokens"].append(episode.model_tokens)
        row["turns"].append(int(meta.get("turns", 0)))
        row["wall_s"].append(float(episode.timings.get("wall_s", 0.0)))
        row["actions"].append(sum(call.get("name") != "submit" for call in episode.tool_calls))
    census.infra_errors.update(errors.values())
    return [
        TaskOutcome(
            task_id,
            r["category"],
            r["difficulty"],
            r["passed"],
            r["rewards"],
            tuple(r["tokens"]),
            tuple(r["model_tokens"]),
            tuple(r["turns"]),
            tuple(r["wall_s"]),
            tuple(r["actions"]),
        )  # fmt: skip
        for task_id, r in sorted(rows.items())
    ]


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one task with n samples, c of them passed: 1 - C(n-c, k) / C(n, k)."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod((n - c - i) / (n - i) for i in range(k))


def bootstrap_interval(
    values: Sequence[float], statistic: Callable[[np.ndarray], np.ndarray] | None = None,
    resamples: int = 10_000, seed: int = 0, confidence: float = CONFIDENCE,
) -> tuple[float, float]:  # fmt: skip
    """A percentile bootstrap interval of the mean (or `statistic`, applied row-wise) over `values`."""
    x = np.asarray(values, dtype=np.float64)
    if len(x) == 0:
        return (math.nan, math.nan)
    idx = np.random.default_rng(seed).integers(0, len(x), size=(resamples, len(x)))
    stats = (statistic or (lambda m: m.mean(axis=1)))(x[idx])
    tail = 100 * (1 - confidence) / 2
    lo, hi = np.percentile(stats, [tail, 100 - tail])
    return (float(lo), float(hi))


def default_ks(outcomes: Iterable[TaskOutcome]) -> tuple[int, ...]:
    """1, 2, 4, ... up to the fewest samples any task has."""
    fewest = min((o.n for o in outcomes), default=0)
    return tuple(k for k in (1, 2, 4, 8, 16, 32, 64, 128) if k <= fewest) or ((1,) if fewest else ())


def summarize(outcomes: Sequence[TaskOutcome], ks: Sequence[int] | None = None, seed: int = 0) -> dict[str, Any]:
    """pass@k (with intervals), mean reward, cost per task, and the same by category and difficulty."""
    ks = tuple(ks) if ks else default_ks(outcomes)
    summary = _block(outcomes, ks, seed)
    for key in ("category", "difficulty"):
        groups: dict[str, list[TaskOutcome]] = defaultdict(list)
        for o in outcomes:
            groups[getattr(o, key)].append(o)
        summary[f"by_{key}"] = {name: _block(group, ks, seed) for name, group in sorted(groups.items())}
    return summary


def _block(outcomes: Sequence[TaskOutcome], ks: Sequence[int], seed: int) -> dict[str, Any]:
    block: dict[str, Any] = {"tasks": len(outcomes), "episodes": sum(o.n for o in outcomes)}
    for k in ks:
        per_task = [pass_at_k(o.n, o.c, k) for o in outcomes if o.n >= k]
        block[f"pass@{k}"] = float(np.mean(per_task)) if per_task else None
        block[f"pass@{k}_ci95"] = list(bootstrap_interval(per_task, seed=seed)) if per_task else None
    rewards = [o.mean_reward for o in outcomes]
    block["mean_reward"] = float(np.mean(rewards)) if rewards else None
    block["mean_reward_ci95"] = list(bootstrap_interval(rewards, seed=seed)) if rewards else None
    per_task = lambda attr: [float(np.sum(getattr(o, attr))) for o in outcomes]  # noqa: E731
    block["tokens_per_task"] = float(np.mean(per_task("tokens"))) if outcomes else None
    block["model_tokens_per_task"] = float(np.mean(per_task("model_tokens"))) if outcomes else None
    block["seconds_per_task"] = float(np.mean(per_task("wall_s"))) if outcomes else None
    # a warm start that taught only "submit at once" passes nothing that needs work: how often it did so
    actions = [n for o in outcomes for n in o.actions]
    block["actions_per_episode"] = float(np.mean(actions)) if actions else None
    block["submitted_at_once"] = float(np.mean([n == 0 for n in actions])) if actions else None
    return block


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts (A passed only: b; B passed only: c)."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def compare(a: Sequence[TaskOutcome], b: Sequence[TaskOutcome], seed: int = 0) -> dict[str, Any]:
    """B against A on the tasks both ran: pass@1 and reward differences (paired bootstrap), McNemar, by category."""
    result = _paired(a, b, seed)
    categories = sorted({o.category for o in a} | {o.category for o in b})
    result["by_category"] = {
        cat: _paired([o for o in a if o.category == cat], [o for o in b if o.category == cat], seed)
        for cat in categories
    }
    return result


def _paired(a: Sequence[TaskOutcome], b: Sequence[TaskOutcome], seed: int) -> dict[str, Any]:
    by_a, by_b = {o.task_id: o for o in a}, {o.task_id: o for o in b}
    shared = sorted(set(by_a) & set(by_b))
    pa = np.array([by_a[t].pass_rate for t in shared])
    pb = np.array([by_b[t].pass_rate for t in shared])
    ra = np.array([by_a[t].mean_reward for t in shared])
    rb = np.array([by_b[t].mean_reward for t in shared])
    only_a = only_b = both = neither = 0
    for t in shared:
        for s in sorted(set(by_a[t].passed) & set(by_b[t].passed)):
            x, y = by_a[t].passed[s], by_b[t].passed[s]
            both, neither = both + (x and y), neither + (not x and not y)
            only_a, only_b = only_a + (x and not y), only_b + (y and not x)
    mean = lambda x: float(x.mean()) if len(x) else None  # noqa: E731
    interval = lambda d: list(bootstrap_interval(d, seed=seed)) if len(d) else None  # noqa: E731
    return {
        "tasks": len(shared),
        "only_in_a": len(set(by_a) - set(by_b)),
        "only_in_b": len(set(by_b) - set(by_a)),
        "pass@1_a": mean(pa),
        "pass@1_b": mean(pb),
        "pass@1_diff": mean(pb - pa),
        "pass@1_diff_ci95": interval(pb - pa),
        "reward_a": mean(ra),
        "reward_b": mean(rb),
        "reward_diff": mean(rb - ra),
        "reward_diff_ci95": interval(rb - ra),
        "pairs": {"both": both, "neither": neither, "only_a": only_a, "only_b": only_b},
        "mcnemar_p": mcnemar_exact(only_a, only_b),
    }
