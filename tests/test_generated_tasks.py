"""The generated shell-basics tier of terminal-coding: well-formed, deterministic, split by family,
short gold commands that pass their hidden tests (in a local shell for every instance, in real
sandboxes for one instance per family)."""

from __future__ import annotations

import os
import re
import subprocess
from collections import Counter

import pytest
from ptrain_terminal_coding import TASKPACK
from ptrain_terminal_coding.generated import CATEGORY, FAMILIES, MAX_SOLUTION_CHARS, generated_tasks

from ptrain import taskpack
from ptrain.sandbox import PoolSet
from ptrain.verify import check_taskpack, select_tasks

WORKSPACE = "/workspace"


@pytest.fixture(scope="module")
def tasks():
    return generated_tasks()


def test_there_are_enough_families_and_instances_in_every_split(tasks):
    assert len(FAMILIES) >= 12
    splits = Counter(t.split for t in tasks)
    assert splits["train"] >= 600 and splits["test"] >= 100 and splits["dev"] > 0
    by_family = Counter((t.metadata["family"], t.split) for t in tasks)
    for family in FAMILIES:
        assert by_family[(family, "train")] and by_family[(family, "test")], family


def test_ids_are_unique_and_the_build_is_deterministic(tasks):
    ids = [t.id for t in tasks]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(rf"{CATEGORY}/[a-z-]+/\d{{5}}", i) for i in ids)
    assert generated_tasks.__wrapped__() == tasks  # a second build, not the cached one
    all_ids = [t.id for t in TASKPACK.all_tasks]
    assert len(set(all_ids)) == len(all_ids) and set(ids) <= set(all_ids)


def test_every_task_is_well_formed_with_a_short_one_line_gold_command(tasks):
    for t in tasks:
        assert taskpack.check_task(t) == [], t.id
        assert t.category == CATEGORY and t.difficulty in ("easy", "medium"), t.id
        solution = t.metadata["solution"]
        assert len(solution) < MAX_SOLUTION_CHARS and "\n" not in solution, t.id
        assert TASKPACK.gold(t)[0].arguments["command"] == solution
        assert len(t.instruction) < 250 and len(t.files) <= 20, t.id
        assert all(text.count(b"\n") <= 30 for text in t.files.values()), t.id
        for source in t.metadata["tests"].values():
            compile(source, t.id, "exec")


def test_instructions_name_the_exact_paths_and_vary(tasks):
    for t in tasks:
        paths = t.metadata["paths"]
        assert paths and all(p.startswith(f"{WORKSPACE}/") for p in paths), t.id
        for path in paths:
            assert re.search(rf"{re.escape(path)}(?![\w-]|\.\w)", t.instruction), (t.id, path)
    for family in FAMILIES:
        openings = {
            tuple(re.sub(r"\S*/workspace\S*", "", t.instruction).split()[:3])
            for t in tasks
            if t.metadata["family"] == family
        }
        assert len(openings) >= 2, family


def run_locally(t, root, calls: list[str]) -> str:
    """Lay out the task under `root` instead of /workspace, run `calls` in bash, then its hidden test:
    '' when the test passes, else why not."""
    root.mkdir()
    for path, data in t.files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    for command in calls:
        command = command.replace(WORKSPACE, str(root))
        done = subprocess.run(
            ["bash", "-c", command], cwd=root, capture_output=True, env={**os.environ, "LC_ALL": "C.UTF-8"}
        )
        if done.returncode:
            return f"{command!r} failed: {done.stderr.decode()}"
    for source in t.metadata["tests"].values():
        namespace: dict = {}
        exec(compile(source.decode().replace(WORKSPACE, str(root)), t.id, "exec"), namespace)
        try:
            namespace["test_result"]()
        except AssertionError as e:
            return f"hidden test failed: {e}"
    return ""


def test_gold_passes_and_a_no_op_fails_every_instance_in_a_local_shell(tasks, tmp_path):
    """No sandbox: the same coreutils, so every instance's data and expected output agree."""
    for i, t in enumerate(tasks):
        assert run_locally(t, tmp_path / f"gold-{i}", [t.metadata["solution"]]) == "", t.id
        assert run_locally(t, tmp_path / f"noop-{i}", []).startswith("hidden test failed"), t.id


@pytest.fixture(scope="module")
async def pools(podman_url):
    async with PoolSet(size=2, max_active=8) as pools:
        yield pools


@pytest.mark.podman
async def test_gold_scores_one_and_a_no_op_zero_in_sandboxes_for_every_family(pools):
    ids = {t.id for t in generated_tasks()}
    served = [t for t in select_tasks(TASKPACK, taskpack.SPLITS) if t.id in ids]  # through the taskpack
    one_each = list({t.metadata["family"]: t for t in served if t.split == "test"}.values())
    assert len(one_each) == len(FAMILIES)
    results = await check_taskpack(TASKPACK, one_each, pools, concurrency=4)
    assert [(r.task.id, r.problem) for r in results if not r.ok] == []
    assert all((r.gold, r.noop) == (1.0, 0.0) for r in results)
