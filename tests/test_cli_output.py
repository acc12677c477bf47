"""Command output a script can read: whole names in a pipe, `--json` on every listing command, library
warnings in the log and not on the terminal, and filters or config values that would select or set
nothing sensible stopped with an error that says what exists."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import ptrain as ptrain_package
from ptrain import taskpack
from ptrain.cli import app
from ptrain.episode import Episode, StoredVerdict
from ptrain.errors import ConfigError
from ptrain.rollout.config import load_config
from ptrain.sandbox import images
from ptrain.store import Store
from ptrain.train.config import load_train_config

PTRAIN = str(Path(sys.executable).parent / "ptrain")
LONG_CATEGORY = "a-category-whose-name-is-far-longer-than-any-eighty-column-table-would-leave-it"
runner = CliRunner()


def ptrain(*args: str, **env: str) -> subprocess.CompletedProcess:
    """The command in a pipe on an 80-column 'terminal', as a script or CI log sees it."""
    return subprocess.run([PTRAIN, *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "COLUMNS": "80", **env})  # fmt: skip


def eval_run(path: Path, categories: dict[str, bool]) -> Path:
    """An evaluation's store: one verified episode per category, passed or not."""
    store = Store(path, create=True)
    mask = np.r_[np.zeros(20), np.ones(5)].astype(bool)
    with store.writer() as writer:
        for category, passed in categories.items():
            e = Episode(run="r", taskpack="terminal-coding", task_id=f"{category}/t", split="test", group_id=category,
                        sample_index=0, group_size=1, token_ids=np.arange(25), loss_mask=mask,
                        logprobs=np.where(mask, -0.5, 0.0), metadata={"category": category, "difficulty": "easy"})  # fmt: skip
            writer.add(e)
            writer.add_verdict(StoredVerdict(episode_id=e.episode_id, reward=float(passed), passed=passed))
    return store.path


def test_taskpacks_list_in_a_pipe_prints_full_names():
    image = images.taskpack_image(taskpack.load("terminal-coding").image)
    done = subprocess.run(f"{PTRAIN} taskpacks list | grep terminal-coding", shell=True, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "COLUMNS": "80"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "ptrain-terminal-coding" in done.stdout and image in done.stdout
    assert "…" not in done.stdout


def test_every_listing_command_takes_json(tmp_path):
    run = eval_run(tmp_path / "run", {"shell-basics": True, "git": False})
    packs = json.loads(ptrain("taskpacks", "list", "--json").stdout)
    terminal = next(p for p in packs if p["name"] == "terminal-coding")
    assert set(terminal) == {"name", "version", "package", "train", "dev", "test", "image", "error"}
    assert terminal["train"] > 0 and terminal["error"] is None
    (model,) = [m for m in json.loads(ptrain("models", "ls", "--json").stdout) if m["name"] == "smollm2-135m"]
    assert set(model) == {"name", "package_file", "checkpoint", "ready"} and isinstance(model["ready"], bool)
    (row,) = json.loads(ptrain("store", "ls", str(run), "--json").stdout)
    assert row["taskpack"] == "terminal-coding" and row["episodes"] == 2 and row["verified"] == 2
    assert row["pass_rate"] == 0.5 and row["mean_reward"] == 0.5
    assert json.loads(ptrain("store", "ls", str(Store(tmp_path / "empty", create=True).path), "--json").stdout) == []
    doctor = json.loads(ptrain("doctor", "--json").stdout)  # exit 1 where a check fails; the JSON says which
    assert set(doctor) == {"ok", "checks", "removed"}
    assert {"podman", "containers.conf"} <= {c["name"] for c in doctor["checks"]}
    assert all(set(c) == {"name", "ok", "detail", "fix"} for c in doctor["checks"])
    compared = json.loads(ptrain("eval", "compare", str(run), str(run), "--json").stdout)
    assert compared["tasks"] == 2 and set(compared["by_category"]) == {"shell-basics", "git"}


@pytest.mark.podman
def test_images_ls_takes_json_and_marks_the_current_images(base_image):
    done = ptrain("images", "ls", "--json")
    assert done.returncode == 0, done.stderr
    rows = {row["image"]: row for row in json.loads(done.stdout)}
    assert rows[base_image]["current"] is True and rows[base_image]["kind"] == "base"
    assert set(rows[base_image]) == {"image", "kind", "size_mb", "created", "current"}
    assert base_image in ptrain("images", "ls").stdout  # whole in the table too


def test_store_ls_and_eval_tables_in_a_pipe_keep_long_names_whole(tmp_path):
    run = eval_run(tmp_path / "run", {LONG_CATEGORY: True})
    commands = [
        (["store", "ls", str(run)], "terminal-coding"),
        (["eval", "compare", str(run), str(run)], LONG_CATEGORY),
    ]
    for args, name in commands:
        result = runner.invoke(app, args, env={"COLUMNS": "80"})  # CliRunner's stdout is not a terminal
        assert result.exit_code == 0, result.output
        assert name in result.output and "…" not in result.output


def test_a_store_warning_prints_once_without_a_source_line(tmp_path):
    run = eval_run(tmp_path / "run", {"shell-basics": True, "git": False})
    (run / "episodes" / "zz-garbage.parquet").write_bytes(os.urandom(4096))
    done = ptrain("store", "ls", str(run), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["episodes"] == 2  # the rest stays readable
    assert done.stderr.count("damaged shard") == 1 and "zz-garbage.parquet" in done.stderr
    assert done.stderr.startswith("warning: ") and "store.py:" not in done.stderr and "warnings.warn" not in done.stderr


def test_category_that_selects_nothing_names_the_categories(tmp_path):
    for flags in (["--category", "no-such-cat"], ["--difficulty", "no-such-tier"],
                  ["--category", "shell-basics", "--difficulty", "no-such-tier"]):  # fmt: skip
        done = ptrain("rollout", str(tmp_path / "run"), "--engine", "gold", *flags)
        assert done.returncode == 2, done.stdout + done.stderr
        message = " ".join(done.stderr.split())  # rich wraps it at 80 columns
        assert "no train task of terminal-coding has" in message and flags[-1] in message
        assert "shell-basics (" in message and "python-bugfix (" in message  # the categories, with their counts
        assert "easy (" in message and "hard (" in message  # and the difficulties
        assert "Traceback" not in done.stderr
    assert not (tmp_path / "run").exists()  # refused before anything was created
    done = ptrain("eval", str(tmp_path / "eval"), "--category", "no-such-cat")
    assert done.returncode == 2 and "no test task of terminal-coding has" in " ".join(done.stderr.split())


def test_a_split_without_tasks_is_an_error_naming_the_splits_that_have_some():
    class Pack:
        name = "tiny"

        def tasks(self, split):
            return [taskpack.Task(id="t", instruction="do it", category="c", difficulty="easy", split="train")] * (
                split == "train"
            )

    with pytest.raises(ConfigError, match="tiny has no dev tasks") as error:
        taskpack.require_tasks(Pack(), "dev")
    assert "train (1)" in error.value.fix
    taskpack.require_tasks(Pack(), "train", ["c"], ["easy"])  # a filter that selects something passes


def test_config_value_is_checked_even_when_a_flag_overrides_it(tmp_path):
    path = tmp_path / "rollout.toml"
    path.write_text('concurrency = "four"\n')
    with pytest.raises(ConfigError, match=r"concurrency must be int, got 'four' in .*rollout\.toml"):
        load_config(path, concurrency=4)
    path.write_text("concurrency = 0\n")
    with pytest.raises(ConfigError, match="concurrency must be at least 1, got 0 .*where a flag overrides"):
        load_config(path, concurrency=4)
    path.write_text("sampels = 8\n")
    with pytest.raises(ConfigError, match=r"unknown rollout config keys: sampels in .*rollout\.toml"):
        load_config(path, samples=8)
    path.write_text("concurrency = 2\n")
    assert load_config(path, concurrency=4).concurrency == 4  # a good value is overridden as before
    train = tmp_path / "train.toml"
    train.write_text('lr = "fast"\n')
    with pytest.raises(ConfigError, match="train config lr must be float"):
        load_train_config(train, lr=1e-4)
    path.write_text('concurrency = "four"\n')
    done = ptrain("rollout", str(tmp_path / "run"), "--config", str(path), "--concurrency", "4")
    assert done.returncode == 2 and "concurrency must be int, got 'four'" in done.stderr


def test_library_warnings_go_to_the_log_and_ptrains_own_still_print(tmp_path):
    script = """
import sys, warnings
import transformers
from pathlib import Path
from ptrain.cli.output import log_library_warnings
from ptrain.store import StoreWarning

log_library_warnings(Path(sys.argv[1]))
warnings.warn_explicit("`past_key_values` is deprecated", FutureWarning, transformers.__file__, 1, "transformers")
warnings.warn("shard-7 set aside", StoreWarning)
"""
    log = tmp_path / "logs" / "warnings.log"
    done = subprocess.run([sys.executable, "-c", script, str(log)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "shard-7 set aside" in done.stderr and "past_key_values" not in done.stderr
    assert "FutureWarning: `past_key_values` is deprecated" in log.read_text()
    assert "shard-7" not in log.read_text()


@pytest.mark.slow
def test_library_warnings_stay_out_of_cli_output(tmp_path, model_path, tokenizer):
    """A real training step (transformers and torch warn of deprecations in it): none of it on the terminal."""
    from test_train import fill_store

    fill_store(tmp_path / "run", tokenizer, tasks=2, samples=2)
    home = tmp_path / "home"
    done = ptrain("train", str(tmp_path / "run"), "--model", str(model_path), "--lora-rank", "4",
                  "--groups-per-step", "2", "--max-steps", "1", PTRAIN_HOME=str(home))  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "step 1" in done.stdout
    assert "Warning:" not in done.stdout + done.stderr and "warnings.warn" not in done.stderr
    log = home / "logs" / "warnings.log"  # what was left out, kept: all of it raised outside ptrain
    assert not log.exists() or str(Path(ptrain_package.__file__).parent) not in log.read_text()
