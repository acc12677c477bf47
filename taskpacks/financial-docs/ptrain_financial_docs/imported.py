"""Public financial QA sets as held-out tasks: files in the FinQA and TAT-QA JSON shapes.

Put FinQA files (a list of `{"id", "pre_text", "post_text", "table", "qa": {"question", "answer",
"exe_ans", "program"}}`) or TAT-QA files (a list of `{"table": {"table": rows}, "paragraphs":
[{"text"}], "questions": [{"uid", "question", "answer", "answer_type", "scale"}]}`) in the
import directory (`$PTRAIN_FINANCIAL_IMPORT_DIR`, else `<ptrain home>/imported/financial-docs`),
or copy them there with `import_file`. Each question becomes a task in the `test` split (these
sets are for held-out evaluation), whose workspace holds its own filing: the question's text and
table as a one-page document with the same index the tools read, so search, read and tables work
unchanged.

Golds: FinQA's `exe_ans` (a fraction becomes a percentage when the answer is written with %, and
"250%" reads as 2.5 as FinQA's own evaluation reads it; the unit is unknown, so the bare number is
compared and only the scale words the excerpt uses are allowed); TAT-QA's answer with its `scale`
(thousand, million, billion, percent), spans aligned one-to-one. Each gold also keeps the dataset's
own answer (`gold["official"]`), so every verdict reports the official metric beside the strict one
(see image/official.py). `$PTRAIN_FINANCIAL_SCORING=official` makes the official exact match the
reward of imported tasks (`metadata["scoring"]`); the default, `strict`, keeps the strict pass/fail.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import warnings
from pathlib import Path
from typing import Any

from ptrain.errors import ConfigError
from ptrain.paths import home
from ptrain.taskpack import Task
from ptrain_financial_docs.corpus import FILINGS, catalog_markdown
from ptrain_financial_docs.htmldoc import table_text
from ptrain_financial_docs.image.fscore import parse_numbers, score

SCALES = {"": 1.0, "thousand": 1e3, "million": 1e6, "billion": 1e9}
SCORING = ("strict", "official")
UNIT_WORDS = {"thousand": 1e3, "million": 1e6, "billion": 1e9}


def scoring() -> str:
    """How imported tasks are rewarded: `strict` (default) or `official` ($PTRAIN_FINANCIAL_SCORING)."""
    mode = os.environ.get("PTRAIN_FINANCIAL_SCORING", "strict")
    if mode not in SCORING:
        raise ConfigError(f"PTRAIN_FINANCIAL_SCORING is {mode!r}", fix=f"set it to one of {', '.join(SCORING)}")
    return mode


def units_of(text: str) -> list[float]:
    """The scale factors an excerpt states amounts in ("in thousands", "$2.1 million")."""
    return sorted({f for word, f in UNIT_WORDS.items() if re.search(rf"\b{word}s?\b", text, re.I)})


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
    source: str,
    key: str,
    question: str,
    gold: dict,
    answer: str,
    files: dict,
    difficulty: str,
    doc: str,
    alternatives: tuple[str, ...] = (),
) -> Task:
    mode = scoring()
    candidates = [answer, *alternatives, str(gold["value"])]
    display = next((c for c in candidates if score(c, {**gold, "mode": mode})["passed"]), candidates[0])
    instruction = (
        f"{question}\n\nThe filing excerpt this question is about is in /workspace/filings (document {doc}). "
        "Use read, tables, search and python, then submit the answer with its unit."
    )
    # a gold no answer can match (a TAT-QA multi-span answer whose spans hold commas or "and") is flagged
    passes = score(display, {**gold, "mode": mode})["passed"]
    meta = {"gold": gold, "display": display, "doc": doc, "source": source, "scoring": mode, "gold_passes": passes}
    return Task(f"imported/{source}/{key}", instruction, source, difficulty, "test", files=files, metadata=meta)


def finqa_gold(qa: dict, excerpt: str) -> dict:
    exe, answer = qa.get("exe_ans"), str(qa.get("answer", ""))
    if isinstance(exe, str) and exe.lower() in ("yes", "no"):
        return {"kind": "yesno", "value": exe.lower(), "official": {"dataset": "finqa", "exe_ans": exe.lower()}}
    value = float(exe)
    stated = parse_numbers(answer)
    percent = answer.strip().endswith("%")
    said = abs(stated[0]["value"]) if stated else 0.0
    if percent and stated and abs(said - abs(value) * 100) < abs(said - abs(value)):
        value *= 100  # exe_ans is the fraction, the answer the percentage (13.6% for 0.13636, 250% for 2.5)
    decimals = decimals_of(answer) if stated else 2
    return {"kind": "number", "value": value, "decimals": decimals, "percent": percent, "ignore_scale": True,
            "units": units_of(excerpt), "percent_as_fraction": True, "official": {"dataset": "finqa", "exe_ans": exe}}  # fmt: skip


def finqa_tasks(items: list[dict]) -> list[Task]:
    tasks = []
    for item in items:
        qa = item["qa"]
        doc = slug(item.get("id", item.get("filename", "finqa")))[:60]
        text = "\n".join([*item.get("pre_text", []), "", *item.get("post_text", [])])
        table = item.get("table", [])
        gold = finqa_gold(qa, "\n".join([text, *(" ".join(map(str, row)) for row in table)]))
        files = one_page_filing(doc, f"{item.get('filename', doc)} (FinQA)", text, table)
        steps = len(qa.get("steps", [])) or str(qa.get("program", "")).count("(")
        difficulty = "easy" if steps <= 1 else "medium" if steps == 2 else "hard"
        exe = qa.get("exe_ans")
        answer = str(qa.get("answer", "")) or str(exe)
        executed = (f"{round(float(exe), 5)!r}",) if not isinstance(exe, str) else ()  # what the official metric pays
        tasks.append(task_of("finqa", doc, qa["question"], gold, answer, files, difficulty, doc, executed))
    return tasks


def tatqa_gold(q: dict) -> tuple[dict, str]:
    answer, scale = q["answer"], q.get("scale", "") or ""
    official = {"dataset": "tatqa", "answer": answer, "answer_type": q.get("answer_type", "span"), "scale": scale}
    spans = answer if isinstance(answer, list) else [answer]
    if q.get("answer_type") == "multi-span":
        gold = {"kind": "spans", "value": [str(s) for s in spans], "official": official}
        if scale == "percent":
            gold["percent"] = True
        elif scale:
            gold["scale"] = SCALES.get(scale, 1.0)
        suffix = "%" if scale == "percent" else f" {scale}" if scale else ""
        shown = [f"{s}{suffix}" if parse_numbers(str(s)) else str(s) for s in spans]
        separator = "; " if any("," in s or ";" in s for s in shown) else ", "
        return gold, separator.join(shown)
    text = str(spans[0])
    numbers = parse_numbers(text)
    if not numbers or q.get("answer_type") == "span" and len(text) > len(numbers[0]["text"]) + 4:
        return {"kind": "text", "value": text, "aliases": [], "official": official}, text
    value = numbers[0]["value"]
    if scale == "percent":
        gold = {"kind": "number", "value": value, "decimals": decimals_of(text), "percent": True, "official": official}
        return gold, f"{text}%"
    factor = SCALES.get(scale, 1.0)
    gold = {"kind": "number", "value": value * factor, "scale": factor, "decimals": decimals_of(text),
            "official": official}  # fmt: skip
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
    """Every task of every FinQA or TAT-QA file in the import directory (none if it does not exist);
    a file that cannot be read is skipped with a warning naming it."""
    directory = directory or import_dir()
    if not directory.is_dir():
        return []
    tasks = []
    for path in sorted(directory.glob("*.json")):
        try:
            tasks += load_file(path)
        except (ConfigError, OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            warnings.warn(f"financial import {path}: {type(e).__name__}: {e} (skipped; the other files are loaded)",
                          FinancialImportWarning, stacklevel=2)  # fmt: skip
    return tasks


class FinancialImportWarning(UserWarning):
    """An imported file of questions that could not be loaded."""


def unpassable(tasks: list[Task]) -> list[Task]:
    """The tasks whose gold answer does not pass its own scoring: no answer can earn their reward."""
    return [task for task in tasks if not task.metadata.get("gold_passes", True)]


def import_file(path: Path, dest: Path | None = None) -> list[Task]:
    """Check that `path` is a FinQA or TAT-QA file, copy it into the import directory, return its tasks."""
    tasks = load_file(path)
    dest = dest or import_dir()
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, dest / path.name)
    return tasks
