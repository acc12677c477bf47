"""Evaluation numbers (ptrain/eval.py) and `ptrain eval compare` on real run directories."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from ptrain.cli import app
from ptrain.episode import Episode, StoredVerdict
from ptrain.eval import (
    Census,
    TaskOutcome,
    bootstrap_interval,
    compare,
    mcnemar_exact,
    pass_at_k,
    summarize,
    task_outcomes,
)
from ptrain.store import Store

runner = CliRunner()


@given(st.integers(1, 9), st.data())
def test_pass_at_k_equals_the_chance_that_some_of_k_drawn_samples_passed(n, data):
    c = data.draw(st.integers(0, n))
    k = data.draw(st.integers(1, n))
    outcomes = [True] * c + [False] * (n - c)
    draws = list(itertools.combinations(range(n), k))
    exact = sum(any(outcomes[i] for i in d) for d in draws) / len(draws)
    assert pass_at_k(n, c, k) == pytest.approx(exact, abs=1e-12)


def test_pass_at_k_refuses_impossible_counts():
    with pytest.raises(ValueError):
        pass_at_k(2, 3, 1)
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_bootstrap_interval_brackets_the_mean_and_narrows_with_more_tasks():
    rng = np.random.default_rng(1)
    small, large = rng.random(20), rng.random(2000)
    lo, hi = bootstrap_interval(small)
    assert lo < small.mean() < hi
    lo2, hi2 = bootstrap_interval(large)
    assert hi2 - lo2 < (hi - lo) / 4
    assert all(math.isnan(v) for v in bootstrap_interval([]))  # no data: NaN, never a number


def test_mcnemar_exact_matches_the_binomial_test():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(0, 10) == pytest.approx(2 / 2**10)
    assert mcnemar_exact(3, 3) == 1.0
    n, k = 12, 2  # two-sided: 2 * P(X <= 2) for X ~ Bin(12, 1/2)
    assert mcnemar_exact(k, n - k) == pytest.approx(2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


def outcome(task: str, passed: list[bool], category: str = "a") -> TaskOutcome:
    return TaskOutcome(task, category, "easy", dict(enumerate(passed)), {i: float(p) for i, p in enumerate(passed)},
                       tokens=(100,) * len(passed), model_tokens=(10,) * len(passed), turns=(2,) * len(passed),
                       wall_s=(1.5,) * len(passed))  # fmt: skip


def test_summarize_gives_pass_at_k_per_task_then_by_category():
    outcomes = [outcome("t1", [True, False]), outcome("t2", [False, False]), outcome("t3", [True, True], "b")]
    s = summarize(outcomes)
    assert s["tasks"] == 3 and s["episodes"] == 6
    assert s["pass@1"] == pytest.approx((0.5 + 0 + 1) / 3)
    assert s["pass@2"] == pytest.approx((1 + 0 + 1) / 3)
    assert s["pass@1_ci95"][0] <= s["pass@1"] <= s["pass@1_ci95"][1]
    assert s["by_category"]["a"]["pass@1"] == pytest.approx(0.25)
    assert s["by_category"]["b"]["tasks"] == 1
    assert s["tokens_per_task"] == 200 and s["seconds_per_task"] == 3.0


def test_compare_pairs_tasks_and_samples_and_reports_discordant_pairs():
    a = [outcome(f"t{i}", [False, False]) for i in range(10)]
    b = [outcome(f"t{i}", [True, i < 5]) for i in range(10)] + [outcome("only-b", [True, True])]
    c = compare(a, b)
    assert c["tasks"] == 10 and c["only_in_b"] == 1
    assert c["pass@1_diff"] == pytest.approx(0.75)
    assert c["pass@1_diff_ci95"][0] > 0  # every task improved or stayed: the interval excludes zero
    assert c["pairs"] == {"both": 0, "neither": 5, "only_a": 0, "only_b": 15}
    assert c["mcnemar_p"] < 1e-3
    assert c["by_category"]["a"]["tasks"] == 10


def episode(task: str, sample: int, status: str = "ok", **overrides) -> Episode:
    mask = np.r_[np.zeros(20), np.ones(5)].astype(bool)
    fields = dict(run="r", taskpack="tiny", task_id=task, split="test", group_id=f"g-{task}", sample_index=sample,
                  group_size=2, token_ids=np.arange(25), loss_mask=mask, logprobs=np.where(mask, -0.5, 0.0),
                  status=status, metadata={"category": "cat", "difficulty": "easy", "turns": 1, "evaluation": True},
                  timings={"wall_s": 2.0})  # fmt: skip
    return Episode(**{**fields, **overrides})


def make_eval_run(path: Path, passes: dict[str, list[bool]], error: bool = False) -> Path:
    store = Store(path, create=True)
    with store.writer() as w:
        for task, results in passes.items():
            for i, passed in enumerate(results):
                e = episode(task, i)
                w.add(e)
                w.add_verdict(StoredVerdict(episode_id=e.episode_id, reward=float(passed), passed=passed))
        if error:
            w.add(episode("t-err", 0, "error", error_type="SandboxError"))
            w.add(episode("t-unverified", 0))
    return store.path


def test_task_outcomes_score_verified_episodes_and_count_the_rest(tmp_path):
    run = make_eval_run(tmp_path / "e", {"t1": [True, False], "t2": [False, False]}, error=True)
    census = Census()
    outcomes = task_outcomes(Store(run), census)
    assert [o.task_id for o in outcomes] == ["t1", "t2"]
    assert outcomes[0].passed == {0: True, 1: False}
    assert census.scored == 4 and census.unverified == 1 and dict(census.infra_errors) == {"SandboxError": 1}


def test_the_summary_says_how_often_the_model_submitted_without_doing_anything(tmp_path):
    """The warm start's held-out check: a model taught only to submit at once shows as 100% here."""
    store = Store(tmp_path / "e", create=True)
    calls = [[{"name": "submit"}], [{"name": "bash"}, {"name": "bash"}, {"name": "submit"}], [], [{"name": "bash"}]]
    with store.writer() as w:
        for i, tool_calls in enumerate(calls):
            e = episode(f"t{i // 2}", i % 2, tool_calls=tool_calls)
            w.add(e)
            w.add_verdict(StoredVerdict(episode_id=e.episode_id, reward=0.0, passed=False))
    s = summarize(task_outcomes(store))
    assert s["actions_per_episode"] == pytest.approx(3 / 4)
    assert s["submitted_at_once"] == pytest.approx(2 / 4)
    assert s["by_category"]["cat"]["submitted_at_once"] == pytest.approx(2 / 4)


def test_infrastructure_failures_count_as_zero_in_pass_at_1_over_all_and_in_their_rate(tmp_path):
    run = make_eval_run(tmp_path / "e", {"t1": [True, True], "t2": [True, False]}, error=True)
    census = Census()
    task_outcomes(Store(run), census)
    assert census.passed == 3 and census.scored == 4 and census.infra_error_count == 1
    assert census.pass_at_1_all == pytest.approx(3 / 5) and census.infra_error_rate == pytest.approx(1 / 6)


def test_a_benchmarks_official_metric_is_averaged_beside_the_reward(tmp_path):
    store = Store(tmp_path / "e", create=True)
    with store.writer() as w:
        for i, (em, f1) in enumerate([(1.0, 1.0), (0.0, 0.5)]):
            e = episode("t1", i)
            w.add(e)
            official = {"metric": "tatqa-official", "em": em, "f1": f1}
            w.add_verdict(
                StoredVerdict(episode_id=e.episode_id, reward=em, passed=bool(em), details={"official": official})
            )
    census = Census()
    task_outcomes(store, census)
    assert census.official_metrics() == {"tatqa-official": {"episodes": 2, "em": 0.5, "f1": 0.75}}


def test_eval_compare_prints_the_paired_difference_as_json(tmp_path):
    a = make_eval_run(tmp_path / "a", {f"t{i}": [False, False] for i in range(8)})
    b = make_eval_run(tmp_path / "b", {f"t{i}": [True, True] for i in range(8)})
    result = runner.invoke(app, ["eval", "compare", str(a), str(b), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["tasks"] == 8 and data["pass@1_diff"] == 1.0 and data["pass@1_diff_ci95"] == [1.0, 1.0]
    table = runner.invoke(app, ["eval", "compare", str(a), str(b)], env={"COLUMNS": "200"})
    assert table.exit_code == 0 and "+100.0" in table.output and "McNemar" in table.output


def test_eval_compare_refuses_a_directory_without_episodes(tmp_path):
    a = make_eval_run(tmp_path / "a", {"t": [True]})
    result = runner.invoke(app, ["eval", "compare", str(a), str(tmp_path / "missing")])
    assert result.exit_code != 0 and "holds no episodes" in str(result.exception)


@pytest.mark.slow
@pytest.mark.podman
def test_eval_against_a_text_only_server_stores_evaluation_episodes_not_for_training(tmp_path, base_image, model_path):
    from test_engine_openai import start_server, stop_server

    served = start_server(tmp_path / "serve.log", "--text-only")
    run = tmp_path / "eval-api"
    args = ["eval", str(run), "--engine", "openai", "--base-url", served.url, "--category", "shell-basics",
            "--tasks", "2", "--samples", "2", "--max-turns", "1", "--max-new-tokens", "24", "--json"]  # fmt: skip
    try:
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        data = json.loads(result.output[result.output.index("{") :])
        again = runner.invoke(app, args)  # resumes: nothing left to roll out, the same numbers
        assert again.exit_code == 0, again.output
    finally:
        stop_server(served.process)
    assert data["summary"]["tasks"] == 2 and data["summary"]["episodes"] == 4
    assert data["run"]["engine"] == "openai" and data["run"]["split"] == "test"
    assert json.loads((run / "eval.json").read_text())["summary"] == data["summary"]
    again_data = json.loads(again.output[again.output.index("{") :])
    assert again_data["run"]["rollout"]["skipped"] == 4 and again_data["summary"] == data["summary"]
    episodes = list(Store(run).episodes())
    assert len(episodes) == 4 and all(e.split == "test" for e in episodes)
    assert all(e.metadata["evaluation"] and e.metadata["text_mode"] and not e.metadata["trainable"] for e in episodes)


def test_eval_with_an_adapter_that_is_not_a_checkpoint_says_so(tmp_path):
    result = runner.invoke(app, ["eval", str(tmp_path / "e"), "--adapter", str(tmp_path)])
    assert result.exit_code != 0 and "neither a checkpoint nor a run" in str(result.exception)
