"""The financial-docs taskpack in real sandboxes: gold passes, empty and wrong-scale answers fail, every tool works."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from ptrain_financial_docs import FinancialDocs

from ptrain import taskpack
from ptrain.sandbox import PoolSet
from ptrain.taskpack import ToolCall
from ptrain.verify import check_taskpack, replay, select_tasks, verify_artifact

pytestmark = pytest.mark.podman
FIXTURES = Path(__file__).parent / "fixtures" / "financial"


@pytest.fixture(scope="module")
def pack():
    """The taskpack with the fixture FinQA and TAT-QA files as its imports (and none of this machine's)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PTRAIN_FINANCIAL_IMPORT_DIR", str(FIXTURES))
        pack = FinancialDocs()
        taskpack.validate(pack, "financial-docs")
        pack.all_tasks  # noqa: B018  (read the import directory while it is set)
    return pack


@pytest.fixture(scope="module")
async def pools(podman_url):
    async with PoolSet(size=2, max_active=6) as pools:
        yield pools


def one_per_category(pack) -> list:
    tasks = select_tasks(pack, taskpack.SPLITS, sample=None)
    firsts = {}
    for t in sorted(tasks, key=lambda t: t.id):
        firsts.setdefault((t.category, t.difficulty), t)
    return [firsts[k] for k in sorted(firsts)][::3]


@pytest.mark.slow
async def test_gold_scores_one_and_a_no_op_zero_on_a_sample_of_generated_and_imported_tasks(pack, pools):
    tasks = one_per_category(pack)
    assert {t.category for t in tasks} & {"finqa", "tatqa"} and len(tasks) >= 4
    results = await check_taskpack(pack, tasks, pools, concurrency=3)
    assert [r.problem for r in results if not r.ok] == []


def money_task(pack):
    return next(
        t for t in pack.tasks("train") if t.metadata["display"].endswith(" million") and t.category == "extraction"
    )


async def answered(pack, pools, task, answer: str):
    artifact = await replay(pack, task, [ToolCall("submit", {"answer": answer})], pools)
    return await verify_artifact(pack, task, artifact, pools)


async def test_the_gold_figure_scores_one_but_at_the_wrong_scale_or_empty_zero(pack, pools):
    task = money_task(pack)
    gold = task.metadata["display"]  # e.g. "$1,234 million"
    right = await answered(pack, pools, task, gold)
    wrong_scale = await answered(pack, pools, task, gold.replace("million", "thousand"))
    empty = await answered(pack, pools, task, "")
    assert right.passed and right.reward == 1.0 and right.verifier_version.startswith("financial-docs/")
    assert wrong_scale.reward == 0.0 and "wrong scale" in wrong_scale.details["reason"]
    assert empty.reward == 0.0 and empty.details["reason"] == "empty answer"


async def test_each_tool_works_in_a_real_sandbox(pack, pools):
    task = money_task(pack)
    doc, year, item, _ = task.metadata["facts"][0]
    tools = {tool.name: tool for tool in pack.tools()}
    async with pools.sandbox(pack.image) as sandbox:
        started = time.monotonic()
        await pack.setup(task, sandbox)
        assert time.monotonic() - started < 10
        found = await tools["search"](sandbox, {"query": f"{doc.split('-')[0]} consolidated statements {year}", "k": 3})
        assert not found.is_error and found.content.startswith("[1] doc=") and "page=" in found.content
        page = await tools["read"](sandbox, {"doc": doc, "page": 3})
        assert not page.is_error and "Consolidated Statements of Operations" in page.content
        rows = await tools["tables"](sandbox, {"doc": doc, "page": 3})
        assert not rows.is_error and '["Revenue", ' in rows.content
        missing = await tools["read"](sandbox, {"doc": doc, "page": 99})
        assert missing.is_error and "pages 1 to" in missing.content
        code = (
            "import json, pandas as pd\n"
            "pages = pd.read_json('filings/.index/pages.jsonl', lines=True)\n"
            f"print(len(pages[pages.doc == {doc!r}]), pages.doc.nunique())"
        )
        computed = await tools["python"](sandbox, {"code": code})
        assert not computed.is_error and int(computed.content.split()[1]) > 100, computed.content
        failed = await tools["python"](sandbox, {"code": "raise SystemExit(3)"})
        assert failed.is_error and "exit code 3" in failed.content
        done = await tools["submit"](sandbox, {"answer": "$1 million"})
        assert done.done
        assert await pack.artifact(task, sandbox) == b"$1 million"
