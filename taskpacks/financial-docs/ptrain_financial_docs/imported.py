"""Public financial QA sets as held-out tasks: files in the FinQA and TAT-QA JSON shapes.

Put FinQA files (a list of `{"id", "pre_text", "post_text", "table", "qa": {"question", "answer",
"exe_ans", "program"}}`) or TAT-QA files (a list of `{"table": {"table": rows}, "paragraphs":
[{"text"}], "questions": [{"uid", "question", "answer", "answer_type", "scale"}]}`) in the
import directory (`$PTRAIN_FINANCIAL_IMPORT_DIR`, else `<ptrain home>/imported/financial-docs`),
or copy them there with `import_file`. Each question becomes a task in the `test` split (these
sets are for held-out evaluation), whose workspace holds its own filing: the question's text and
table as a one-page document with the same index the tools read, so search, read and tables work
unchanged.

Golds: FinQA's `exe_ans` (a fraction becomes a percentage when the answer is written with %; its
unit is unknown, so scale words are ignored); TAT-QA's answer with its `scale` (thousand, million,
billion, percent), spans compared as normalised text.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from ptrain.errors import ConfigError
from ptrain.sandbox.runtime import home
from ptrain.taskpack import Task
from ptrain_financial_docs.corpus import FILINGS, catalog_markdown
from ptrain_financial_docs.htmldoc import table_text
from ptrain_financial_docs.image.fscore import parse_numbers, score

SCALES = {"": 1.0, "thousand": 1e3, "million": 1e6, "billion": 1e9}


def import_dir() -> Path:
    return Path(os.environ.get("PTRAIN_FINANCIAL_IMPORT_DIR", home() / "imported" / "financial-docs"))


def shape_of(data: Any) -> str:
    items = data if isinstance(data, list) else [data]
    if items and all(isinstance(i, dict) and "qa" in i and "table" in i for i in items):
        return "finqa"
    if items and all(isinstance(i, dict) and "questions" in i and "paragraphs" in i for i in items):
        return "tatqa"
    raise ConfigError(
        "not a FinQA or TAT-QA file",
        fix="FinQA items have pre_text/post_text/table/qa; TAT-QA items table/paragraphs/questions",
    )


def decimals_of(text: str) -> int:
    numbers = parse_numbers(text)
    raw = numbers[0]["text"] if numbers else ""
    return min(4, len(raw.split(".")[1])) if "." in raw else 0


def one_page_filing(doc: str, title: str, text: str, table: list[list[str]]) -> dict[str, bytes]:
    """The workspace files of a one-document corpus, in the layout `fdocs.py` reads."""
    rows = [[str(c) for c in row] for row in table]
    tables = [{"title": "Table", "unit": "", "header": rows[0], "rows": rows[1:]}] if rows else []
    page_text = "\n\n".join([text] + [table_text(t) for t in tables])
    entry = {"doc": doc, "company": "", "ticker": "", "year": "", "file": f"{doc}.txt", "pages": 1, "title": title}
    return {
        f"{FILINGS}/{doc}.txt": page_text.encode(),
        f"{FILINGS}/CATALOG.md": catalog_markdown([entry]).encode(),
        f"{FILINGS}/.index/catalog.json": json.dumps([entry]).encode(),
        f"{FILINGS}/.index/pages.jsonl": (
            json.dumps({"doc": doc, "page": 1, "text": page_text, "tables": tables}) + "\n"
        ).encode(),
    }


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def task_of(
    source: str, key: str, question: str, gold: dict, answer: str, files: dict, difficulty: str, doc: str
) -> Task:
    display = answer if score(answer, gold)["passed"] else str(gold["value"])
    instruction = (
        f"{question}\n\nThe filing excerpt this question is about is in /workspace/filings (document {doc}). "
        "Use read, tables, search and python, then submit the answer with its unit."
    )
    meta = {"gold": gold, "display": display, "doc": doc, "source": source}
    return Task(f"imported/{source}/{key}", instruction, source, difficulty, "test", files=files, metadata=meta)


def finqa_tasks(items: list[dict]) -> list[Task]:
    tasks = []
    for item in items:
        qa = item["qa"]
        exe, answer = qa.get("exe_ans"), str(qa.get("answer", ""))
        if isinstance(exe, str) and exe.lower() in ("yes", "no"):
            gold: dict = {"kind": "yesno", "value": exe.lower()}
        else:
            value = float(exe)
            stated = parse_numbers(answer)
            percent = answer.strip().endswith("%")
            if (
                percent
                and stated
                and abs(value) < 2
                and abs(abs(stated[0]["value"]) - abs(value) * 100) <= 0.5 + abs(value)
            ):
                value *= 100  # exe_ans is the fraction, the answer the percentage
            decimals = decimals_of(answer) if stated else 2
            gold = {"kind": "number", "value": value, "decimals": decimals, "percent": percent, "ignore_scale": True}
        doc = slug(item.get("id", item.get("filename", "finqa")))[:60]
        text = "\n".join([*item.get("pre_text", []), "", *item.get("post_text", [])])
        files = one_page_filing(doc, f"{item.get('filename', doc)} (FinQA)", text, item.get("table", []))
        steps = len(qa.get("steps", [])) or str(qa.get("program", "")).count("(")
        difficulty = "easy" if steps <= 1 else "medium" if steps == 2 else "hard"
        tasks.append(task_of("finqa", doc, qa["question"], gold, answer or str(exe), files, difficulty, doc))
    return tasks


def tatqa_gold(q: dict) -> tuple[dict, str]:
    answer, scale = q["answer"], q.get("scale", "")
    spans = answer if isinstance(answer, list) else [answer]
    if q.get("answer_type") == "multi-span":
        return {"kind": "spans", "value": [str(s) for s in spans]}, ", ".join(map(str, spans))
    text = str(spans[0])
    numbers = parse_numbers(text)
    if not numbers or q.get("answer_type") == "span" and len(text) > len(numbers[0]["text"]) + 4:
        return {"kind": "text", "value": text, "aliases": []}, text
    value = numbers[0]["value"]
    if scale == "percent":
        gold = {"kind": "number", "value": value, "decimals": decimals_of(text), "percent": True}
        return gold, f"{text}%"
    factor = SCALES.get(scale, 1.0)
    gold = {"kind": "number", "value": value * factor, "scale": factor, "decimals": decimals_of(text)}
    return gold, f"{text} {scale}".strip()


def tatqa_tasks(items: list[dict]) -> list[Task]:
    tasks = []
    for item in items:
        table = item.get("table", {})
        rows = table.get("table", []) if isinstance(table, dict) else table
        paragraphs = sorted(item.get("paragraphs", []), key=lambda p: p.get("order", 0))
        text = "\n\n".join(p["text"] for p in paragraphs)
        doc = slug(f"tatqa-{table.get('uid', 'doc') if isinstance(table, dict) else 'doc'}")[:60]
        files = one_page_filing(doc, "Annual report excerpt (TAT-QA)", text, rows)
        for q in item["questions"]:
            gold, answer = tatqa_gold(q)
            kind = q.get("answer_type", "span")
            difficulty = {"span": "easy", "multi-span": "medium", "count": "medium"}.get(kind, "hard")
            tasks.append(task_of("tatqa", slug(q["uid"]), q["question"], gold, answer, files, difficulty, doc))
    return tasks


def load_file(path: Path) -> list[Task]:
    data = json.loads(path.read_text())
    items = data if isinstance(data, list) else [data]
    return finqa_tasks(items) if shape_of(items) == "finqa" else tatqa_tasks(items)


def load_imported(directory: Path | None = None) -> list[Task]:
    """Every task of every FinQA or TAT-QA file in the import directory (none if it does not exist)."""
    directory = directory or import_dir()
    if not directory.is_dir():
        return []
    return [task for path in sorted(directory.glob("*.json")) for task in load_file(path)]


def import_file(path: Path, dest: Path | None = None) -> list[Task]:
    """Check that `path` is a FinQA or TAT-QA file, copy it into the import directory, return its tasks."""
    tasks = load_file(path)
    dest = dest or import_dir()
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, dest / path.name)
    return tasks
