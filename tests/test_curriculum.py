"""The curriculum: running pass-rate estimates per task, draws weighted toward tasks with signal,
tiers unlocked as the easier ones are learned, the same draw on resume (pure: no model, no sandbox)."""

from __future__ import annotations

from collections import Counter

import pytest

from ptrain.online.curriculum import Curriculum
from ptrain.taskpack import Task


def tasks(n_easy: int = 6, n_medium: int = 4, n_hard: int = 2) -> list[Task]:
    spec = [("easy", n_easy), ("medium", n_medium), ("hard", n_hard)]
    return [Task(id=f"{tier}/{i}", instruction="x", category=f"cat{i % 2}", difficulty=tier, split="train")
            for tier, n in spec for i in range(n)]  # fmt: skip


def test_it_starts_on_the_easiest_tier_and_draws_only_from_it():
    c = Curriculum(tasks(), seed=1)
    assert c.ladder == ["easy", "medium", "hard"] and c.snapshot()["tier"] == "easy"
    assert all(t.startswith("easy/") for r in range(20) for t in c.pick(4, r))
    assert len(set(c.pick(6, 0))) == 6 and len(c.pick(10, 0)) == 6  # distinct, never more than open


def test_estimates_follow_the_evidence_and_old_evidence_decays():
    c = Curriculum(tasks(), decay=0.5)
    assert c.rate("easy/0") is None
    c.observe("easy/0", [True, True, False, False], policy_version=0)
    assert c.rate("easy/0") == pytest.approx(0.5)
    c.observe("easy/0", [True] * 4, policy_version=2)  # the old evidence counts a quarter now
    assert c.rate("easy/0") == pytest.approx((1 + 0.5 + 4) / (2 + 1 + 4))
    c.observe("unknown/task", [True], 3)  # not in the pool: ignored
    assert "unknown/task" not in c.estimates


def test_draws_favour_tasks_with_signal_and_count_the_settled_ones_passed_over():
    c = Curriculum(tasks(n_easy=6, n_medium=0, n_hard=0), seed=3, settled=0.15)
    for i in range(4):  # easy/0..3 settled: always fail or always pass
        c.observe(f"easy/{i}", [i % 2 == 0] * 8, 0)
    c.observe("easy/4", [True, False] * 4, 0)  # learnable: p = 1/2
    counts = Counter(t for r in range(400) for t in c.pick(1, r))
    assert counts["easy/4"] > 4 * max(counts[f"easy/{i}"] for i in range(4))
    # unseen: tried, at its category's pooled estimate (cat1's two seen tasks always failed: 1/18)
    assert counts["easy/5"] > max(counts[f"easy/{i}"] for i in range(4))
    assert all(counts[f"easy/{i}"] > 0 for i in range(4))  # settled tasks keep a floor
    chosen = c.pick(2, 0)
    passed_over = Counter(
        "settled at 1" if i % 2 == 0 else "settled at 0" for i in range(4) if f"easy/{i}" not in chosen
    )
    assert c.snapshot()["skipped"] == dict(passed_over) and sum(passed_over.values()) >= 2


def test_a_categorys_next_tier_unlocks_once_its_open_one_is_learned_and_stays_unlocked():
    c = Curriculum(tasks(n_easy=8), promote_at=0.6, min_seen=4)  # cat0: easy/0, 2, 4, 6
    for i in (0, 2, 4):
        c.observe(f"easy/{i}", [True] * 8, 0)
    assert c.snapshot()["tier"] == "easy"  # three seen: not enough evidence yet
    c.observe("easy/6", [True] * 6 + [False] * 2, 0)
    snap = c.snapshot()
    assert snap["tier"] == "medium" and snap["climbed"] == {"cat0": "medium"}
    drawn = {t for r in range(20) for t in c.pick(8, r)}
    assert {"medium/0", "medium/2"} & drawn and not {"medium/1", "medium/3"} & drawn  # cat1 is still on easy
    for i in range(8):
        c.observe(f"easy/{i}", [False] * 8, 5)
    assert c.snapshot()["climbed"] == {"cat0": "medium"}  # a dip does not lock it again
    snap = c.snapshot()
    assert snap["tiers"]["easy"]["seen"] == 8 and snap["tiers"]["hard"]["seen"] == 0
    assert set(snap["categories"]) == {"cat0", "cat1"}


def test_a_category_starts_on_its_own_easiest_tier():
    pool = [Task(id=f"shell/{i}", instruction="x", category="shell", difficulty="medium", split="train")
            for i in range(3)] + [Task(id="fix/0", instruction="x", category="fix", difficulty="easy", split="train"),
                                  Task(id="fix/1", instruction="x", category="fix", difficulty="medium", split="train")]  # fmt: skip
    c = Curriculum(pool)
    assert {t.id for t in c.open_tasks()} == {"shell/0", "shell/1", "shell/2", "fix/0"}


def test_a_rebuilt_curriculum_draws_the_same_tasks():
    history = [("easy/0", [True, False], 0), ("easy/1", [True, True], 0), ("easy/2", [False, False], 1)]
    a, b = Curriculum(tasks(), seed=7), Curriculum(tasks(), seed=7)
    for task_id, passed, version in history:
        a.observe(task_id, passed, version)
        b.observe(task_id, passed, version)
    assert [a.pick(3, r) for r in range(5)] == [b.pick(3, r) for r in range(5)]
    fresh = Curriculum(tasks(), seed=7)
    assert [fresh.pick(3, r) for r in range(5)] != [a.pick(3, r) for r in range(5)]  # the evidence changed the draws


def test_the_snapshot_and_the_progress_line_carry_each_seen_tasks_estimate():
    from ptrain.online.rounds import curriculum_line

    c = Curriculum(tasks())
    c.observe("easy/0", [True, False], 0)
    c.observe("easy/1", [False, False, False, False], 0)
    c.pick(4, 0)
    snap = c.snapshot()
    assert snap["rates"] == {"easy/0": 0.5, "easy/1": round(1 / 6, 3)}
    line = curriculum_line({"curriculum": snap, "refills": 2})
    assert line.startswith("tier easy open; easy 0.33 (2 seen), medium - (0 seen)") and line.endswith("; 2 refills")


def test_an_unseen_task_takes_its_categorys_estimate_so_an_unreachable_category_stops_drawing():
    c = Curriculum(tasks(n_easy=40, n_medium=0, n_hard=0), seed=5)
    for i in range(0, 12, 2):  # six cat0 tasks, every sample failed
        c.observe(f"easy/{i}", [False] * 8, 0)
    unseen0 = [f"easy/{i}" for i in range(12, 40, 2)]  # cat0, never drawn yet
    unseen1 = [f"easy/{i}" for i in range(1, 40, 2)]  # cat1: nothing known
    assert c.weight(unseen0[0])[0] < 0.05 < c.weight(unseen1[0])[0] == 0.25
    counts = Counter(t for r in range(300) for t in c.pick(2, r))
    assert sum(counts[t] for t in unseen1) > 3 * sum(counts[t] for t in unseen0)


def test_a_shaped_reward_counts_as_that_fraction_of_a_pass():
    c = Curriculum(tasks(), decay=1.0)
    c.observe("easy/0", [0.25, 0.75, 0.5, 0.5], 0)
    assert c.rate("easy/0") == pytest.approx((1 + 2) / (2 + 4))
    assert c.weight("easy/0") == (pytest.approx(0.25), "learnable")


def test_tasks_out_of_reach_do_not_hold_the_next_tier_locked():
    c = Curriculum(tasks(n_easy=8), promote_at=0.6, min_seen=2)
    for i in (0, 2):  # cat0: out of reach (every sample failed)
        c.observe(f"easy/{i}", [False] * 8, 0)
    c.observe("easy/4", [True] * 2 + [False] * 6, 0)
    assert c.snapshot()["tier"] == "easy"  # within reach, not learned
    c.observe("easy/6", [True] * 7 + [False], 0)
    assert c.snapshot()["tier"] == "easy"  # the mean of those within reach (0.3, 0.8) is under 0.6
    c.observe("easy/4", [True] * 8, 1)
    assert c.snapshot()["climbed"] == {"cat0": "medium"}  # those within reach are learned; the rest is out of reach


def test_a_tier_with_nothing_within_reach_stays_open_alone():
    c = Curriculum(tasks(), min_seen=4)
    for i in range(6):
        c.observe(f"easy/{i}", [False] * 8, 0)
    assert c.snapshot()["tier"] == "easy"  # nothing learned: the harder tier would not be reached either
