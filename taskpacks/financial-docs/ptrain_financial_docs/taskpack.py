"""The FinancialDocs taskpack object: tasks, tools, setup, artifact, verifier and gold.

Generated questions over the universe's filings are split by company (`split_of(company id)`),
so a test company's filings are never asked about in training (cross-company questions pair
companies of one split). Imported FinQA / TAT-QA questions are all `test`; their verdicts carry the
official metric too, and `metadata["scoring"]` says which one is the reward (see imported.py).
`probes(task)` are the taskpack's own attacks on its scorer (see probes.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ptrain.sandbox.container import Sandbox
from ptrain.sandbox.images import ImageSpec
from ptrain.taskpack import WORKSPACE, Probe, Task, ToolCall, Verdict, place_files
from ptrain_financial_docs.corpus import corpus_tar, sections
from ptrain_financial_docs.imported import load_imported
from ptrain_financial_docs.probes import probes as answer_probes
from ptrain_financial_docs.questions import ITEMS, Question, display, gold_answer, gold_code
from ptrain_financial_docs.templates import all_questions
from ptrain_financial_docs.tools import analyst_tools
from ptrain_financial_docs.universe import company, universe
from ptrain_financial_docs.verifier import score_in_sandbox, submitted_answer

VERSION = "0.2.0"
READ_ITEMS = ("employees", "dps", "recast")  # facts stated in prose: gold reads the page, not its tables
INSTRUCTIONS = (
    "{question}\n\nThe annual reports (Form 10-K) of {n} companies for fiscal {first} to {last} are in "
    "/workspace/filings (CATALOG.md lists them; some are PDF, some HTML). Use search, read and tables to find "
    'the figures and python to compute. Submit only the answer, with its unit: a figure like "$1,234 million", '
    '"12.5%" or "1.85" (where a name is asked for, just the name).'
)


def question_task(q: Question) -> Task:
    gold = gold_answer(q)
    years = sorted({y for c in universe() for y in c.reported})
    instruction = INSTRUCTIONS.format(question=q.text, n=len(universe()), first=years[0], last=years[-1])
    meta = {"gold": gold, "display": display(q, gold), "program": q.program, "code": gold_code(q),
            "facts": [[f.doc, f.year, f.item, f.section] for f in q.facts], "company": q.company}  # fmt: skip
    return Task(q.id, instruction, q.category, q.difficulty, company(q.company).split, metadata=meta)


@dataclass
class FinancialDocs:
    name: str = "financial-docs"
    version: str = VERSION
    image: ImageSpec = field(default_factory=lambda: ImageSpec("financial-docs", Path(__file__).parent / "image"))

    @cached_property
    def all_tasks(self) -> list[Task]:
        return [question_task(q) for q in all_questions()] + load_imported()

    def tasks(self, split: str) -> Iterable[Task]:
        return [task for task in self.all_tasks if task.split == split]

    def tools(self) -> list:
        return analyst_tools()

    async def setup(self, task: Task, sandbox: Sandbox) -> None:
        if task.files:  # an imported question brings its own one-document corpus
            await place_files(sandbox, task.files)
        else:  # the whole corpus: search must range over every company's filings
            await sandbox.put_tar(WORKSPACE, await asyncio.to_thread(corpus_tar))

    async def artifact(self, task: Task, sandbox: Sandbox) -> bytes:
        return await submitted_answer(sandbox)

    async def verify(self, task: Task, artifact: bytes, sandbox: Sandbox) -> Verdict:
        gold = {**task.metadata["gold"], "mode": task.metadata.get("scoring", "strict")}
        return await score_in_sandbox(sandbox, artifact, gold, f"{self.name}/{self.version}")

    def probes(self, task: Task) -> list[Probe]:
        return answer_probes(task)

    def gold(self, task: Task) -> list[ToolCall] | None:
        meta = task.metadata
        submit = ToolCall("submit", {"answer": meta["display"]})
        if "facts" not in meta:  # imported
            return [ToolCall("read", {"doc": meta["doc"], "page": 1}), submit]
        pages = sections()
        # one figure as a page shows it needs no python: the answer is the figure copied from the table
        # (no thousands separators there) or the prose. The search names the line item as the question
        # does and asks for three passages, so the page the gold reads is among them for most questions
        # (a table row is a passage of its own, fdocs.py): 266 of the train split's 388 easy questions,
        # against 65 with the item's key and one passage, where the page was the gold's own knowledge
        single = meta["program"] == "f0" and len(meta["facts"]) == 1
        calls = [ToolCall("search", {"query": search_query(task), "k": 3})]
        seen = set()
        for doc, _, item, section in meta["facts"]:
            page = pages[doc][section]
            if (doc, page) not in seen:
                seen.add((doc, page))
                calls.append(ToolCall("read" if item in READ_ITEMS else "tables", {"doc": doc, "page": page}))
        if single:
            as_shown = meta["display"] if meta["facts"][0][2] in READ_ITEMS else meta["display"].replace(",", "")
            return [*calls, ToolCall("submit", {"answer": as_shown})]
        return [*calls, ToolCall("python", {"code": meta["code"]}), submit]


def search_query(task: Task) -> str:
    c = company(task.metadata["company"])
    doc, year, item, _ = task.metadata["facts"][0]
    named = ITEMS[item][0] if item in ITEMS else item.replace("_", " ").replace(":", " ")
    return f"{c.short_name} {named} {year}"
