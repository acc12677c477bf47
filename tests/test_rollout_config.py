"""The rollout config: defaults, then a TOML file, then flags; unknown keys and wrong types are errors."""

from __future__ import annotations

import pytest

from ptrain.errors import ConfigError
from ptrain.rollout.config import RolloutConfig, load_config


def test_flags_override_the_file_and_the_file_overrides_the_defaults(tmp_path):
    path = tmp_path / "rollout.toml"
    path.write_text('samples = 8\nconcurrency = 3\ntask_ids = ["a", "b"]\ntemperature = 1\n')
    config = load_config(path, concurrency=5, mode=None)
    assert (config.samples, config.concurrency, config.task_ids, config.mode) == (8, 5, ("a", "b"), "async")
    assert config.temperature == 1.0 and isinstance(config.temperature, float)


def test_an_unknown_key_is_an_error_that_lists_the_known_ones(tmp_path):
    path = tmp_path / "rollout.toml"
    path.write_text("sampels = 8\n")
    with pytest.raises(ConfigError, match="unknown rollout config keys: sampels") as error:
        load_config(path)
    assert "samples" in error.value.fix


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('samples = "8"', "samples must be int"),
        ("verify = 1", "verify must be bool"),
        ('mode = "fast"', "mode 'fast' is not one of"),
        ('engine = "openai"', "needs base_url"),
        ("concurrency = 0", "concurrency must be at least 1"),
        ("max_batch = 0", "max_batch must be at least 1"),
        ('dtype = "int4"', "dtype 'int4' is not one of"),
        ("samples = [", "cannot read rollout config"),
    ],
)
def test_bad_values_are_named(tmp_path, text, match):
    path = tmp_path / "rollout.toml"
    path.write_text(text + "\n")
    with pytest.raises(ConfigError, match=match):
        load_config(path)


def test_the_command_passes_its_flags_into_the_config(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from ptrain.cli import app
    from ptrain.cli import rollout as rollout_cli
    from ptrain.rollout.progress import RolloutReport

    seen = []

    async def run_rollout(run, cfg, live=True):
        seen.append(cfg)
        return RolloutReport()

    monkeypatch.setattr(rollout_cli, "run_rollout", run_rollout)
    argv = ["rollout", str(tmp_path / "run"), "--concurrency", "48", "--max-batch", "16", "--dtype", "bfloat16"]
    for flag in ("--engine-process", "--engine-in-process"):
        result = CliRunner().invoke(app, [*argv, flag])
        assert result.exit_code == 0, result.output
    assert [(c.concurrency, c.max_batch, c.dtype, c.engine_process) for c in seen] == [
        (48, 16, "bfloat16", True),
        (48, 16, "bfloat16", False),
    ]


def test_the_defaults_are_a_valid_config():
    assert load_config() == RolloutConfig()


def test_auto_action_format_is_bash_with_a_shell_and_json_calls_otherwise():
    from ptrain.rollout.chat import resolve_action_format
    from ptrain.tools import BashTool, EditorTool, SubmitTool

    assert RolloutConfig().action_format == "auto"
    assert resolve_action_format("auto", [BashTool(), EditorTool(), SubmitTool()]) == "bash"
    assert resolve_action_format("auto", [EditorTool(), SubmitTool()]) == "hermes"  # e.g. cad: no shell
    assert resolve_action_format("hermes", [BashTool(), SubmitTool()]) == "hermes"  # a choice is kept


def test_a_running_rollouts_rates_are_over_its_time_so_far_never_over_zero_seconds():
    """A snapshot taken before the rollout ended once showed 294 tokens over 1e-9 s: 2.94e11 tokens/s."""
    import time

    from ptrain.rollout.progress import RolloutReport

    report = RolloutReport(model_tokens=294)
    assert report.as_dict()["tokens_per_s"] is None  # not started: no rate
    report.started = time.monotonic() - 2.0
    running = report.as_dict()
    assert 100 < running["tokens_per_s"] <= 147 and running["wall_s"] >= 2.0
    report.wall_s = 3.0  # ended
    assert report.as_dict()["tokens_per_s"] == 98.0
