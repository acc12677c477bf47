"""The financial-docs taskpack's own probes: each scores 0 through the real scorer on every task.

On the host for every generated and fixture task (the scorer is the same file the sandbox runs),
and once as real episodes in real sandboxes."""

from __future__ import annotations

from pathlib import Path

import pytest
from ptrain_financial_docs import FinancialDocs
from ptrain_financial_docs.image.fscore import score

from ptrain.sandbox import PoolSet
from ptrain.taskpack import Probe
from ptrain.verify import replay, verify_artifact

FIXTURES = Path(__file__).parent / "fixtures" / "financial"
NAMES = {"scale-word", "list-stuffing", "yes-and-no"}


@pytest.fixture(scope="module")
def pack():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PTRAIN_FINANCIAL_IMPORT_DIR", str(FIXTURES))
        pack = FinancialDocs()
        pack.all_tasks  # noqa: B018  (read the import directory while it is set)
    return pack


def scored(task, answer: str) -> dict:
    return score(answer, {**task.metadata["gold"], "mode": task.metadata.get("scoring", "strict")})


def test_every_probe_is_a_submit_and_scores_zero_on_every_task_while_gold_scores_one(pack):
    assert len(pack.all_tasks) == 1752
    for task in pack.all_tasks:
        probes = pack.probes(task)
        assert {p.name for p in probes} == NAMES and all(isinstance(p, Probe) for p in probes)
        assert scored(task, task.metadata["display"])["reward"] == 1.0, task.id
        for probe in probes:
            assert probe.calls[-1].name == "submit", (task.id, probe.name)
            answer = probe.calls[-1].arguments["answer"]
            assert scored(task, answer)["reward"] == 0.0, (task.id, probe.name, answer)


def test_probes_score_zero_in_official_mode_too(pack):
    for task in [t for t in pack.all_tasks if t.id.startswith("imported/")]:
        for probe in pack.probes(task):
            gold = {**task.metadata["gold"], "mode": "official"}
            assert score(probe.calls[-1].arguments["answer"], gold)["reward"] == 0.0, (task.id, probe.name)


def test_list_stuffing_puts_the_gold_first_among_many_candidates(pack):
    task = next(t for t in pack.tasks("train") if t.metadata["display"].endswith(" million"))
    stuffed = next(p for p in pack.probes(task) if p.name == "list-stuffing").calls[-1].arguments["answer"]
    assert stuffed.startswith(task.metadata["display"] + ", ") and stuffed.count(", ") >= 10


@pytest.fixture(scope="module")
async def pools(podman_url):
    async with PoolSet(size=2, max_active=4) as pools:
        yield pools


@pytest.mark.podman
async def test_each_probe_replayed_as_a_real_episode_scores_zero(pack, pools):
    tasks = [
        next(t for t in pack.tasks("train") if t.metadata["display"].endswith(" million")),
        next(t for t in pack.all_tasks if t.id == "imported/tatqa/q-0004"),
    ]
    for task in tasks:
        for probe in pack.probes(task):
            verdict = await verify_artifact(pack, task, await replay(pack, task, probe.calls, pools), pools)
            assert verdict.reward == 0.0 and verdict.details["metric"] == "strict", (task.id, probe.name)
