"""Answers that try to score without knowing the answer: the taskpack's own probes.

`ptrain taskpacks check` replays each as a real episode (the submit call below, then verification in
a fresh sandbox) and requires a reward of 0 on every task. They use the task's hidden gold to build
the strongest form of each attack:

- scale-word: the gold's digits with a wrong scale word ("$4,512 billion" for "$4,512 million"; a
  scale word FinQA's excerpt does not use), or a bare scale word where the gold has no figure;
- list-stuffing: the gold first, then many candidates (multiples of it, its negation, every number
  of the facts or the excerpt it comes from): an attacker who can list candidates;
- yes-and-no: both options at once ("yes and no", the figure or its negation, the span or not).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ptrain.taskpack import Probe, Task, ToolCall
from ptrain_financial_docs.image.fscore import NUMBER, SCALE_WORDS, parse_numbers

SCALE_WORD = re.compile(r"\s*\b(?:thousand|million|billion|trillion)s?\b", re.I)
MAX_CANDIDATES = 40


def wrong_scale(gold: Mapping[str, Any], display: str) -> str:
    if gold["kind"] != "number":
        return "million"
    numbers = parse_numbers(display)
    if gold.get("percent"):
        return f"{abs(numbers[0]['value']) if numbers else 1:g} million"
    if gold.get("ignore_scale"):  # any scale word the excerpt does not use
        factor = next(f for f in (1e12, 1e9, 1e6, 1e3) if f not in gold.get("units", []))
    else:  # a thousand times the gold's unit: the digits right, the figure wrong
        factor = min(float(gold.get("scale") or 1.0) * 1e3, 1e12)
    bare = SCALE_WORD.sub("", display).strip()
    m = NUMBER.search(bare)  # the word right after the digits: "29.0 thousand days"
    return f"{bare[: m.end()]} {SCALE_WORDS[factor]}{bare[m.end() :]}" if m else SCALE_WORDS[factor]


def source_text(task: Task) -> str:
    """What the question is computed from: the gold program's facts, or the imported excerpt's page."""
    if task.metadata.get("code"):
        return task.metadata["code"]
    page = task.files.get("filings/.index/pages.jsonl", b"")
    return "\n".join(json.loads(line)["text"] for line in page.decode().splitlines() if line.strip())


def candidates(task: Task) -> list[str]:
    gold, display = task.metadata["gold"], task.metadata["display"]
    if gold["kind"] == "yesno":
        return ["yes", "no"]
    if gold["kind"] in ("text", "spans"):
        phrases = re.findall(r"[A-Za-z][a-z]+(?: [a-z]+){0,2}", source_text(task) + "\n" + task.instruction)
        return [display, *dict.fromkeys(phrases)][:MAX_CANDIDATES]
    v = float(gold["value"]) / float(gold.get("scale") or 1.0)
    others = [f"{v * k:,.2f}" for k in (0.5, 0.9, 1.1, 2, 10, 0.1)] + ([f"{-v:,.2f}"] if v else [])
    table = dict.fromkeys(n["text"] for n in parse_numbers(source_text(task)))
    return [display, *others, *table, "1", "2", "3"][:MAX_CANDIDATES]


def both_options(gold: Mapping[str, Any], display: str) -> str:
    if gold["kind"] == "yesno":
        return "yes and no"
    if gold["kind"] == "number":
        if not float(gold["value"]):
            return f"{display} or {re.sub(r'0', '1', display, count=1)}"
        return f"{display} or {display[1:] if display.startswith('-') else '-' + display}"
    return f"{display} or not {display}"


def probes(task: Task) -> list[Probe]:
    gold, display = task.metadata["gold"], task.metadata["display"]
    answers = {
        "scale-word": (wrong_scale(gold, display), "the gold's digits with a wrong scale word, or a bare scale word"),
        "list-stuffing": (", ".join(candidates(task)), "the gold first among many candidate answers"),
        "yes-and-no": (both_options(gold, display), "both options at once: yes and no, the figure or its negation"),
    }
    return [Probe(name, (ToolCall("submit", {"answer": a}),), why) for name, (a, why) in answers.items()]
