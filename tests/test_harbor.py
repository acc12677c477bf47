"""Harbor / Terminal-Bench import: both layouts convert, and in real sandboxes gold scores 1 and a no-op 0."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ptrain_terminal_coding import TASKPACK
from ptrain_terminal_coding.harbor import import_tasks, load_imported
from ptrain_terminal_coding.taskpack import TerminalCoding

from ptrain import taskpack
from ptrain.sandbox import PoolSet, images
from ptrain.taskpack import ToolCall
from ptrain.verify import check_one, replay, verify_artifact

FIXTURES = Path(__file__).parent / "fixtures"
PTRAIN = str(Path(sys.executable).parent / "ptrain")
NAMES = ["count-words", "fix-server-config", "reverse-lines", "sum-column"]


def code(text: str) -> str:
    """A script without its comments (converted lines keep the original as a `# ptrain: was` comment)."""
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("imported")
    results = import_tasks(FIXTURES / "harbor", dest) + import_tasks(FIXTURES / "terminal-bench", dest)
    assert [(r.name, r.error) for r in results if not r.ok] == []
    assert sorted(r.name for r in results) == NAMES
    return dest


@pytest.fixture(scope="module")
async def pools(imported, podman_url, base_image):
    images.build_taskpack(TASKPACK.image, podman_url)  # imported images reuse its layers: seconds each
    async with PoolSet(size=1, max_active=8, urls=[podman_url]) as pools:
        yield pools


def test_both_layouts_convert_with_from_mapped_and_test_time_installs_replaced(imported):
    containerfile = (imported / "count-words" / "environment" / "Containerfile").read_text()
    froms = [line for line in containerfile.splitlines() if line.startswith("FROM")]
    assert froms == ["FROM ${BASE_IMAGE}"] and "\nARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n" in containerfile
    assert "COPY notes.txt /app/notes.txt" in containerfile and "CMD" not in code(containerfile)
    assert containerfile.rstrip().endswith("chown -R 1000:1000 /app\nWORKDIR /app\nUSER 1000:1000")
    assert "ENTRYPOINT" not in code((imported / "fix-server-config" / "environment" / "Containerfile").read_text())

    for script in ("count-words/tests/test.sh", "fix-server-config/tests/test.sh", "sum-column/tests/run-tests.sh"):
        text = code((imported / script).read_text())
        assert not re.search(r"\b(uvx|uv|curl|apt-get|source)\b|--ctrf", text), script
        assert "python3 -P -m pytest" in text and not re.search(r"(?<![\w/])/(tests|logs)/", text), script
    tb = code((imported / "reverse-lines" / "tests" / "run-tests.sh").read_text())
    assert "pip" not in tb and "pytest $TEST_DIR/test_outputs.py -rA" in tb
    moved = (imported / "sum-column" / "tests" / "test_outputs.py").read_text()
    assert 'Path("/tmp/ptrain-verify/tests/expected_total.txt")' in moved  # /tests in a test file moves too
    assert not (imported / "reverse-lines" / "environment" / "tests").exists()  # tests never enter the image


def test_imported_tasks_carry_their_image_workdir_split_and_verifier(imported, monkeypatch):
    tasks = {t.id: t for t in load_imported(imported)}
    assert sorted(tasks) == [f"imported/{name}" for name in NAMES]
    config = tasks["imported/fix-server-config"]
    assert (config.category, config.difficulty) == ("system-administration", "medium")
    assert config.split == taskpack.split_of("imported/fix-server-config")
    assert config.image.name == "imported-fix-server-config" and config.image.workdir == "/srv/web"
    assert config.metadata["verifier"] == "harbor" and config.metadata["env"] == {"EXPECTED_PORT": "8080"}
    assert config.setup == 'export APP_ENV="staging"'  # the sandbox shell starts without the image's ENV
    assert tasks["imported/sum-column"].image.workdir == "/data"
    assert all(taskpack.check_task(t) == [] for t in tasks.values())
    monkeypatch.setenv("PTRAIN_IMPORT_DIR", str(imported))
    assert set(tasks) <= {t.id for t in TerminalCoding().all_tasks}


def test_a_task_that_cannot_be_converted_is_named_and_the_others_still_import(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(FIXTURES / "harbor", src)
    shutil.copytree(src / "count-words", src / "on-alpine")
    (src / "on-alpine" / "environment" / "Dockerfile").write_text("FROM alpine:3.20\nRUN apk add bash\n")
    shutil.copytree(src / "count-words", src / "no-tests")
    (src / "no-tests" / "tests" / "test.sh").unlink()
    shutil.copytree(src / "count-words", src / "pip-in-build")
    (src / "pip-in-build" / "environment" / "Dockerfile").write_text("FROM python:3.12\nRUN pip install numpy\n")

    results = {r.name: r for r in import_tasks(src, tmp_path / "dest")}
    alpine = results["on-alpine"].error
    assert re.match(r"task 'on-alpine' \(.*/on-alpine\): base image 'alpine:3.20' can't be mapped", alpine)
    assert "no tests/test.sh" in results["no-tests"].error
    assert "pip install numpy` needs PyPI" in results["pip-in-build"].error
    assert results["count-words"].ok and results["fix-server-config"].ok
    assert sorted(p.name for p in (tmp_path / "dest").iterdir()) == ["count-words", "fix-server-config"]


def test_the_cli_prints_what_was_mapped_and_fails_when_a_task_did_not_convert(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(FIXTURES / "terminal-bench", src)
    (src / "reverse-lines" / "Dockerfile").write_text("FROM node:22\n")
    env = {**os.environ, "COLUMNS": "250", "PTRAIN_IMPORT_DIR": str(tmp_path / "dest")}
    done = subprocess.run([PTRAIN, "taskpacks", "import-harbor", str(src)], capture_output=True, text=True, env=env)
    assert done.returncode == 1, done.stderr
    assert "imported/sum-column" in done.stdout and "`uv run pytest` → `python3 -P -m pytest`" in done.stdout
    assert "base image 'node:22' can't be mapped" in done.stdout and "1 imported, 1 failed" in done.stdout
    assert (tmp_path / "dest" / "sum-column" / "ptrain-import.json").is_file()


async def test_gold_scores_one_and_a_no_op_zero_in_both_layouts(imported, pools):
    tasks = load_imported(imported)
    results = await asyncio.gather(*(check_one(TASKPACK, task, pools) for task in tasks))
    assert [(r.task.id, r.problem) for r in results if not r.ok] == []
    assert all(r.gold == 1.0 and r.noop == 0.0 for r in results)


async def verdict_after(imported, pools, name: str, command: str):
    task = next(t for t in load_imported(imported) if t.id == f"imported/{name}")
    artifact = await replay(TASKPACK, task, [ToolCall("bash", {"command": command})], pools)
    return await verify_artifact(TASKPACK, task, artifact, pools)


async def test_reward_json_gives_partial_credit(imported, pools):
    fix_port_only = "sed -i 's/^port = 80$/port = 8080/' server.ini"
    verdict = await verdict_after(imported, pools, "fix-server-config", fix_port_only)
    assert verdict.reward == pytest.approx(1 / 3) and not verdict.passed
    assert verdict.details["reward_from"] == "reward.json" and verdict.details["rewards"]["settings_right"] == 1


async def test_a_pytest_module_planted_in_the_workspace_cannot_fake_a_pass(imported, pools):
    plant = "printf 'import sys\\nprint(\"3 passed\")\\nsys.exit(0)\\n' > pytest.py && echo 9 > count.txt.bak"
    verdict = await verdict_after(imported, pools, "count-words", plant)
    assert verdict.reward == 0.0 and verdict.details["reward_from"] == "reward.txt", verdict.details


async def test_deleting_a_file_from_the_image_counts(imported, pools):
    verdict = await verdict_after(imported, pools, "reverse-lines", "tac input.txt > output.txt && rm input.txt")
    assert verdict.reward == 0.0 and "test_input_is_kept" in verdict.details["output"]
