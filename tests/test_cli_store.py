"""`ptrain store ls|show|stats|export` on a real run directory."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from ptrain.cli.store import app
from ptrain.episode import Episode, StoredVerdict
from ptrain.store import Store, StoreError

runner = CliRunner()


def episode(task: int, sample: int, status: str = "ok", **overrides) -> Episode:
    n = 120
    mask = np.r_[np.zeros(50), np.ones(30), np.zeros(25), np.ones(15)].astype(bool)
    fields = dict(
        run="r", taskpack="cad", taskpack_version="0.2", task_id=f"task-{task}", split="train" if task else "test",
        group_id=f"g{task}", sample_index=sample, group_size=2, token_ids=np.arange(n), loss_mask=mask,
        logprobs=np.where(mask, -0.5, 0.0), status=status, model="SmolLM2", policy_version=3,
        transcript=[
            {"role": "user", "content": "Model a [bold]cube[/bold]."},
            {"role": "assistant", "content": "```bash\nopenscad cube.scad\n```"},
            {"role": "tool", "content": "\n".join(f"line {i}" for i in range(500))},
        ],
        tool_calls=[{"name": "bash", "arguments": {"command": "openscad cube.scad"}, "ok": True}],
    )  # fmt: skip
    return Episode(**{**fields, **overrides})


@pytest.fixture
def run(tmp_path: Path) -> Path:
    store = Store(tmp_path / "run", create=True)
    episodes = [episode(1, 0), episode(1, 1, "truncated"), episode(2, 0, "truncated"), episode(2, 1, "truncated")]
    episodes.append(episode(0, 0, "error", error_type="SandboxError", error_message="container died"))
    with store.writer() as writer:
        for e in episodes:
            writer.add(e)
        for e in episodes[:4]:
            writer.add_verdict(StoredVerdict(episode_id=e.episode_id, reward=1.0, passed=True, details={"iou": 0.97}))
    return store.path


def invoke(*args: str) -> str:
    result = runner.invoke(app, list(args), env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def test_ls_counts_episodes_by_taskpack_split_and_status_with_rewards(run: Path):
    out = invoke("ls", str(run))
    rows = {
        cells[2]: cells[3:11] for line in out.splitlines() if len(cells := [c.strip() for c in line.split("│")]) > 10
    }
    assert rows["train"] == ["4", "1", "3", "0", "0", "4", "1.000", "100.0%"]
    assert rows["test"] == ["1", "0", "0", "0", "1", "0", "-", "-"]


def test_show_prints_the_transcript_telling_model_from_tool_tokens(run: Path):
    target = next(e for e in Store(run).episodes() if e.status == "ok")
    out = invoke("show", str(run), target.episode_id[:10], "--max-chars", "300")
    assert target.episode_id in out
    assert "prompt 50 · model 30 · tool 25 · model 15" in out
    assert "model tokens, trained on" in out and "tool output, not trained on" in out
    assert "[bold]cube[/bold]" in out  # shown as text, never as markup
    assert "chars cut" in out and "line 499" in out and "line 250" not in out
    assert "reward 1.000" in out and "openscad cube.scad" in out


def test_show_of_an_unknown_episode_is_a_store_error(run: Path):
    result = runner.invoke(app, ["show", str(run), "nope"])
    assert isinstance(result.exception, StoreError) and "no episode" in str(result.exception)


def test_stats_says_loudly_when_most_episodes_are_truncated_and_groups_have_equal_rewards(run: Path):
    out = invoke("stats", str(run))
    assert "episodes" in out and "SandboxError 1" in out and "complete 2" in out
    assert "warning: 3 of 5 episodes were truncated" in out
    assert "warning: 2 of 2 verified groups have all-equal rewards" in out


def test_export_writes_sft_jsonl_and_a_plain_parquet(run: Path, tmp_path: Path):
    out = tmp_path / "sft.jsonl"
    assert "wrote 1 episode " in invoke("export", str(run), "--out", str(out), "--status", "ok", "--min-reward", "1")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[0]["messages"][1] == {"role": "assistant", "content": "```bash\nopenscad cube.scad\n```"}
    parquet = tmp_path / "all.parquet"
    assert "wrote 5 episodes" in invoke("export", str(run), "--format", "parquet", "--out", str(parquet))
    table = pq.read_table(parquet)
    assert table.num_rows == 5 and {"messages", "reward", "token_ids", "loss_mask"} <= set(table.column_names)
