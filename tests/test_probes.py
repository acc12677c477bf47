"""Every shared adversarial probe replayed as a real episode on real terminal-coding tasks: each must
score 0, and where it attacks the harness the verdict must say how it was caught. The same attacks on
top of a real fix must not turn into a pass either (a tampered harness is a 0 whatever the code)."""

from __future__ import annotations

import pytest
from ptrain_terminal_coding import TASKPACK

from ptrain import taskpack
from ptrain.probes import shared_probes
from ptrain.sandbox import PoolSet
from ptrain.verify import check_taskpack, probe_reward, probes_of, replay, select_tasks, verify_artifact

pytestmark = pytest.mark.podman

PYTHON_TASK = "python-debug/fix-mean"  # the hidden tests import the workspace's modules
SCRIPT_TASK = "performance/dedupe-lines"  # they run its script in a subprocess
GIT_TASK = "git/revert-commit"  # they run git in its repository
CAUGHT = {  # probe -> what the verdict says on the Python task, where the payload runs inside pytest
    "hookwrapper": "canary",
    "harness-monkeypatch": "canary",
    "forged-report": "not one report",
    "detached-rewriter": "not one report",
    "sparse-file": "not collected",
    "huge-file": "not collected",
}


def task(task_id: str):
    return next(t for split in taskpack.SPLITS for t in TASKPACK.tasks(split) if t.id == task_id)


@pytest.fixture(scope="module")
async def pools(podman_url):
    async with PoolSet(size=2, max_active=8) as pools:
        yield pools


def test_every_taskpack_with_bash_gets_the_shared_probes_and_others_none():
    names = {p.name for p in shared_probes(task(PYTHON_TASK), {"bash", "submit"})}
    assert {"hookwrapper", "atexit-rewrite", "detached-rewriter", "forged-report", "harness-monkeypatch",
            "planted-config", "path-shims", "reward-file", "git-hooks", "symlinks-out", "sparse-file",
            "huge-file", "deep-directories"} <= names  # fmt: skip
    assert shared_probes(task(PYTHON_TASK), {"str_replace_editor", "submit"}) == []


@pytest.mark.parametrize("probe", [p.name for p in shared_probes(task(PYTHON_TASK), {"bash"})])
async def test_each_probe_scores_zero_on_a_python_task_and_is_caught_for_what_it_is(pools, probe):
    t = task(PYTHON_TASK)
    (chosen,) = [p for p in probes_of(TASKPACK, t) if p.name == probe]
    reward, why = await probe_reward(TASKPACK, t, chosen, pools)
    assert reward == 0.0
    if probe in CAUGHT:
        assert CAUGHT[probe] in why, why


@pytest.mark.slow
@pytest.mark.parametrize("task_id", [SCRIPT_TASK, GIT_TASK])
async def test_every_probe_scores_zero_on_script_and_git_tasks_while_gold_scores_one(pools, task_id):
    (result,) = await check_taskpack(TASKPACK, [task(task_id)], pools)
    assert result.ok, result.problem
    assert result.gold == 1.0 and len(result.probes) >= 13 and not any(result.probes.values())


@pytest.mark.parametrize("probe", ["hookwrapper", "harness-monkeypatch", "forged-report", "detached-rewriter"])
async def test_a_real_fix_with_a_tampering_payload_on_top_is_still_a_zero(pools, probe):
    t = task(PYTHON_TASK)
    (chosen,) = [p for p in probes_of(TASKPACK, t) if p.name == probe]
    calls = TASKPACK.gold(t)[:-1] + list(chosen.calls)  # gold's command, then the payload, then submit
    verdict = await verify_artifact(TASKPACK, t, await replay(TASKPACK, t, calls, pools), pools)
    assert verdict.reward == 0.0 and verdict.details.get("tampered"), verdict.details


async def test_the_real_fix_alone_still_passes(pools):
    t = task(PYTHON_TASK)
    verdict = await verify_artifact(TASKPACK, t, await replay(TASKPACK, t, TASKPACK.gold(t), pools), pools)
    assert verdict.passed and verdict.details["tests"] >= 1 and "tampered" not in verdict.details


async def test_mutation_probes_are_part_of_the_check(pools):
    (t,) = select_tasks(TASKPACK, ["test"], categories=["python-bugfix"], sample=1, seed=3)
    names = {p.name for p in probes_of(TASKPACK, t)}
    assert {"always-equal", "visible-inputs"} <= names
