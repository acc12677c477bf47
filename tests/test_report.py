"""`ptrain report RUN`: a self-contained HTML page whose every plot loads in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ptrain.cli import app
from ptrain.cli.eval import evaluation
from ptrain.episode import Episode, StoredVerdict
from ptrain.report import build_report, error_signature, tool_errors
from ptrain.store import Store

runner = CliRunner()


def episode(task: str, sample: int, turns: int, errors: bool, evaluation_run: bool = False) -> Episode:
    n = 40 + 30 * turns
    mask = np.zeros(n, bool)
    mask[40:] = True
    calls = [{"turn": 1, "name": "bash", "arguments": {"command": "ls /nope"}, "is_error": errors,
              "error": "ls: cannot access '/nope/x1': No such file or directory\n\n[exit code 2]"}]  # fmt: skip
    return Episode(run="r", taskpack="tiny", task_id=task, split="test" if evaluation_run else "train",
                   group_id=f"g-{task}", sample_index=sample, group_size=2, token_ids=np.arange(n), loss_mask=mask,
                   logprobs=np.where(mask, -0.3, 0.0), tool_calls=calls, timings={"wall_s": 3.0},
                   metadata={"category": "files" if task < "t3" else "text", "difficulty": "easy", "turns": turns,
                             "format_errors": ["Your reply has no bash block (line 2)."] if errors else [],
                             "evaluation": evaluation_run})  # fmt: skip


def write_store(path: Path, results: dict[str, list[bool]], evaluation_run: bool) -> Path:
    store = Store(path, create=True)
    with store.writer() as w:
        for task, passes in results.items():
            for i, passed in enumerate(passes):
                e = episode(task, i, turns=1 + i, errors=not passed, evaluation_run=evaluation_run)
                w.add(e)
                w.add_verdict(StoredVerdict(episode_id=e.episode_id, reward=float(passed), passed=passed))
    return store.path


def write_eval(path: Path, results: dict[str, list[bool]], model: str) -> Path:
    write_store(path, results, evaluation_run=True)
    summary = evaluation(path)
    summary["run"] = {"model": model, "split": "test"}
    (path / "eval.json").write_text(json.dumps(summary))
    return path


@pytest.fixture
def trained_run(tmp_path: Path) -> Path:
    run = write_store(tmp_path / "run", {f"t{i}": [i % 2 == 0, False] for i in range(6)}, evaluation_run=False)
    metrics = run / "metrics"
    metrics.mkdir()
    rows = [{"step": s, "algo": "grpo", "loss": 1.0 / s, "reward_mean": 0.1 * s, "grad_norm": 0.5, "mismatch": 1e-4 * s,
             "mismatch_max": 1e-3 * s, "mismatch_k3": 1e-8 * s, "entropy": 2.0 - 0.1 * s, "clipped": 0.01 * s,
             "capped": 0.0} for s in range(1, 6)]  # fmt: skip
    (metrics / "train.jsonl").write_text("\n".join(map(json.dumps, rows)) + "\n{cut by a kill")
    t0 = time.time()
    snaps = [{"kind": "snapshot", "time": t0 + i, "in_generate": 4 - i % 3, "in_tools": i % 3,
              "engine_busy_s_total": 0.8 * i} for i in range(30)]  # fmt: skip
    (metrics / "rollout-20260101-000000.jsonl").write_text("\n".join(map(json.dumps, snaps)))
    write_eval(run / "eval" / "1-base", {f"t{i}": [False, False] for i in range(6)}, "base")
    write_eval(run / "eval" / "2-trained", {f"t{i}": [True, i < 3] for i in range(6)}, "trained")
    return run


def chromium_plots(page: Path) -> tuple[int, int]:
    """(loaded, total) as the page's own script counted them in headless Chromium."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    assert browser, "Chromium is needed for this test: apt-get install chromium (scripts/test installs it)"
    dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout  # fmt: skip
    loaded = re.search(r'data-plots-loaded="(\d+)"', dom)
    total = re.search(r'data-plots-total="(\d+)"', dom)
    assert loaded and total, dom[:500]
    return int(loaded.group(1)), int(total.group(1))


def test_report_of_a_trained_run_shows_every_plot_in_chromium(trained_run: Path):
    result = runner.invoke(app, ["report", str(trained_run)])
    assert result.exit_code == 0, result.output
    page = trained_run / "report.html"
    text = page.read_text()
    assert "http://" not in text and "https://" not in text  # self-contained
    assert text.count("<img class='plot'") == 6 and "No training metrics" not in text
    assert "Behaviour policy" in text and "No GRPO steps with behaviour metrics" not in text
    assert "2-trained against 1-base (paired)" in text
    assert chromium_plots(page) == (6, 6)


def test_report_of_a_bare_run_says_what_is_missing_and_still_loads(tmp_path: Path):
    run = write_eval(tmp_path / "eval-only", {"t1": [True], "t2": [False]}, "m")
    page = build_report(run)
    text = page.read_text()
    assert "No training metrics in this run" in text and "No rollout metrics" in text
    assert "No GRPO steps with behaviour metrics" in text
    loaded, total = chromium_plots(page)
    assert loaded == total == text.count("<img class='plot'") == 3  # categories, episodes, tool errors


def test_report_refuses_an_eval_directory_that_is_not_one(trained_run: Path, tmp_path: Path):
    result = runner.invoke(app, ["report", str(trained_run), "--eval", str(tmp_path)])
    assert result.exit_code != 0 and "not an evaluation run" in str(result.exception)


def test_tool_errors_are_grouped_by_kind_without_paths_or_numbers(trained_run: Path):
    assert (
        error_signature("ls: cannot access '/a/b': No such file\n\n[exit code 2]")
        == "ls: cannot access '…': No such file"
    )
    assert error_signature("main: line 3: s: command not found") == "s: command not found"
    assert error_signature("\n[exit code 1]") == "non-zero exit, no output"
    counts = tool_errors(Store(trained_run).episodes())
    assert counts["bash: ls: cannot access '…': No such file or directory"] == 9
    assert counts["malformed turn: Your reply has no bash block (line N)."] == 9


def curriculum_round(n: int, rates: dict[str, float], tier: str = "easy", skipped: dict | None = None) -> dict:
    easy = [r for t, r in rates.items() if t.startswith("e")]
    tiers = {"easy": {"tasks": 4, "seen": len(easy), "pass_rate": sum(easy) / len(easy) if easy else None},
             "medium": {"tasks": 2, "seen": 0, "pass_rate": None}}  # fmt: skip
    return {"round": n, "policy_version": n - 1, "reward_mean": 0.5, "pass_rate": 0.5, "groups_with_signal": 1,
            "tasks": 2, "stepped": True, "loss": 0.1, "rollout_s": 10.0,
            "curriculum": {"tier": tier, "tiers": tiers, "categories": {}, "skipped": skipped or {}, "rates": rates}}  # fmt: skip


def test_the_report_shows_the_curriculum_and_its_tasks_by_pass_rate_over_time(tmp_path: Path):
    run = write_eval(tmp_path / "run", {"t1": [True]}, "m")
    rounds = [curriculum_round(1, {"e1": 0.5}), curriculum_round(2, {"e1": 0.667, "e2": 0.25}),
              curriculum_round(3, {"e1": 0.8, "e2": 0.2}, tier="medium", skipped={"settled at 0": 1})]  # fmt: skip
    (run / "metrics").mkdir(exist_ok=True)
    (run / "metrics" / "online.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rounds))
    text = build_report(run).read_text()
    assert "<h2>Curriculum</h2>" in text and "Tasks by estimated pass rate over time" in text
    table = text[text.index("<table class='curriculum'>") :]
    table = table[: table.index("</table>")]
    rows = re.findall(r"<tr><td>(e\d)</td>(.*?)</tr>", table)
    assert [task for task, _ in rows] == ["e1", "e2"]  # highest latest rate first
    assert re.findall(r">([\d.]*)</td>", rows[0][1]) == ["0.50", "0.67", "0.80"]
    assert re.findall(r">([\d.]*)</td>", rows[1][1]) == ["", "0.25", "0.20"]  # not seen in round 1


def test_a_report_without_a_curriculum_has_no_curriculum_section(trained_run: Path):
    text = build_report(trained_run).read_text()
    assert "<h2>Curriculum</h2>" not in text and "Tasks by estimated pass rate" not in text
