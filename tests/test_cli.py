"""The `ptrain` command line, run as a user would: a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ptrain.cli.doctor import checks
from ptrain.sandbox.runtime import client

PTRAIN = str(Path(sys.executable).parent / "ptrain")


def ptrain(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([PTRAIN, *args], capture_output=True, text=True, env=env, timeout=600)


def test_doctor_shows_podman_runtime_service_and_image_green(base_image):
    rows = {row.name: row for row in checks()}
    for name in ("podman", "runc", "mmdebstrap", "containers.conf", "API service", "base image"):
        assert rows[name].ok, rows[name]
    done = ptrain("doctor")
    assert "containers.conf" in done.stdout and "API service" in done.stdout
    assert done.returncode == (0 if all(row.ok for row in rows.values()) else 1)


def test_doctor_clean_removes_only_containers_whose_owner_is_gone(base_image, podman_url):
    podman = client(podman_url)
    dead = subprocess.Popen(["true"])
    dead.wait()
    orphan = podman.containers.create(
        base_image, labels={"ptrain": "1", "ptrain.owner": f"{os.uname().nodename}:{dead.pid}"}
    )
    alive = podman.containers.create(
        base_image, labels={"ptrain": "1", "ptrain.owner": f"{os.uname().nodename}:{os.getpid()}"}
    )
    try:
        done = ptrain("doctor", "--clean")
        assert orphan.name in done.stdout
        assert not podman.containers.exists(orphan.id)
        assert podman.containers.exists(alive.id)
    finally:
        alive.remove(force=True)


def test_scripted_episode_passes_in_a_sandbox(base_image):
    done = ptrain("sandbox", "demo")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAILED (failures=1, errors=1)" in done.stdout  # the bug is there first
    assert "scripted episode passed" in done.stdout


def test_sandbox_exec_returns_the_commands_exit_code(base_image):
    done = ptrain("sandbox", "exec", "cd /tmp", "pwd; exit 3")
    assert "/tmp" in done.stdout
    assert done.returncode == 3


def test_a_ptrain_error_prints_a_message_without_a_traceback():
    done = ptrain("images", "build", "--taskpack", "no-such-pack")
    assert done.returncode == 2
    assert "error: no taskpack named 'no-such-pack'" in done.stderr
    assert "Traceback" not in done.stderr


def test_taskpacks_check_on_a_sample_passes_and_shows_a_table():
    done = ptrain("taskpacks", "check", "terminal-coding", "--sample", "4", "--seed", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 passed, 0 failed" in done.stdout


def test_taskpacks_new_scaffolds_a_package(tmp_path):
    done = ptrain("taskpacks", "new", "my-tasks", "--dir", str(tmp_path))
    assert done.returncode == 0
    assert (tmp_path / "ptrain-my-tasks" / "ptrain_my_tasks" / "__init__.py").is_file()
    assert "ptrain taskpacks check my-tasks" in done.stdout


def test_taskpacks_check_with_an_unknown_probe_names_the_known_ones_and_runs_nothing():
    done = ptrain(
        "taskpacks", "check", "terminal-coding", "--task", "python-debug/fix-mean", "--probe", "no-such-probe"
    )
    assert done.returncode == 2 and "no probe named no-such-probe" in done.stderr + done.stdout
    assert "hookwrapper" in done.stderr + done.stdout and "Traceback" not in done.stderr


def test_taskpacks_check_selects_by_category_and_tier_and_reports_json():
    done = ptrain("taskpacks", "check", "terminal-coding", "--category", "git", "--difficulty", "easy",
                  "--split", "test", "--no-probes", "--timeout-s", "300", "--json")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["passed"] == len(report["results"]) >= 1 and report["failed"] == report["no_gold"] == 0
    assert {(r["category"], r["difficulty"], r["split"], r["status"]) for r in report["results"]} == {
        ("git", "easy", "test", "passed")
    }


def test_taskpacks_check_with_nothing_selected_is_an_error():
    done = ptrain("taskpacks", "check", "terminal-coding", "--category", "no-such-category")
    assert done.returncode == 2 and "no task of terminal-coding matches" in done.stderr + done.stdout
