"""Scoring an analyst's answer against a gold answer: number normalisation, tolerance, yes/no, short text.

Standard library only: this file is copied into the sandbox image and run there by the verifier
(`python3 fscore.py GOLD_JSON ANSWER_TXT` prints the verdict as JSON), and imported on the host by
the taskpack and its tests, so the same code scores in both places.

A gold answer is a dict:
- `{"kind": "number", "value": 4.512e9, "scale": 1e6, "decimals": 0, "percent": false}`: `value` is
  absolute (dollars, days, a ratio); `scale` is the unit the gold is stated in (1e6 for "in millions")
  and `decimals` its precision at that scale. `percent: true` means `value` is in percent (42.1 for 42.1%).
- `{"kind": "yesno", "value": "yes"}`, `{"kind": "text", "value": "Acme Corp", "aliases": [...]}`,
  `{"kind": "spans", "value": ["a", "b"]}` (several short texts, any order). `ignore_scale: true` (imported
  golds whose unit is unknown) compares the bare number and ignores any scale word in the answer.

Numbers in the answer are read the way analysts write them: thousands separators, currency signs,
parentheses or a minus or "a loss of" for negatives, %, and scale words (thousand/million/billion,
k/m/bn). A number given without a scale word is taken at the gold's scale ("4,512" for "$4,512
million"); one with a scale word must be right in absolute terms, so 1,234 thousand is not 1,234
million. A fraction equals a percentage (0.421 for 42.1%) only when the gold is a percentage. An
answer is right within relative error 1e-3, or when it equals the gold rounded to the gold's precision.
"""

from __future__ import annotations

import json
import math
import re
import string
import sys
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal

REL_TOL = 1e-3
SCALES = {
    "thousand": 1e3, "thousands": 1e3, "k": 1e3,
    "million": 1e6, "millions": 1e6, "mn": 1e6, "mm": 1e6, "m": 1e6, "mil": 1e6,
    "billion": 1e9, "billions": 1e9, "bn": 1e9, "b": 1e9,
    "trillion": 1e12, "trillions": 1e12, "tn": 1e12,
}  # fmt: skip
NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\d])")
CURRENCY = r"(?:[$€£¥]|usd|us\$|eur|gbp)"
NEG_PREFIX = re.compile(rf"(?:[-−–]\s*{CURRENCY}?|{CURRENCY}\s*[-−–])\s*$", re.I)
PAREN_PREFIX = re.compile(rf"\(\s*{CURRENCY}?\s*$|{CURRENCY}\s*\(\s*$", re.I)
LOSS_PREFIX = re.compile(
    rf"\b(?:loss|losses|deficit|negative|minus|decrease[sd]?|decline[sd]?|down|fell|dropped|drop|outflow)"
    rf"(?:\s+(?:of|by|to))?\s*(?:approximately\s+|about\s+)?{CURRENCY}?\s*$",
    re.I,
)
PERCENT_SUFFIX = re.compile(r"^\s*\)?\s*(?:%|percent\b|per\s+cent\b|pct\b|percentage\s+points?\b|pp\b)", re.I)
SCALE_SUFFIX = re.compile(r"^\s*\)?\s*(" + "|".join(sorted(SCALES, key=len, reverse=True)) + r")\b", re.I)
PAREN_SUFFIX = re.compile(r"^\s*(?:%|[a-z]+)?\s*\)", re.I)
CURRENCY_NEAR = re.compile(rf"{CURRENCY}\s*[-−–(]?\s*$", re.I)
YES = {"yes", "true", "correct", "y"}
NO = {"no", "false", "incorrect", "n"}
SUFFIXES = {"inc", "incorporated", "corp", "corporation", "co", "company", "ltd", "limited", "plc", "llc", "the"}
ARTICLES = {"a", "an", "the"}


def parse_numbers(text: str) -> list[dict]:
    """Every number in `text` with its sign, percent flag and scale, in order of appearance."""
    found = []
    for m in NUMBER.finditer(text):
        raw = m.group(1)
        value = float(raw.replace(",", ""))
        before, after = text[max(0, m.start() - 40) : m.start()], text[m.end() : m.end() + 24]
        paren = bool(PAREN_PREFIX.search(before)) and bool(PAREN_SUFFIX.match(after))
        negative = paren or bool(NEG_PREFIX.search(before)) or bool(LOSS_PREFIX.search(before))
        percent = bool(PERCENT_SUFFIX.match(after))
        scale_match = None if percent else SCALE_SUFFIX.match(after)
        scale = SCALES[scale_match.group(1).lower()] if scale_match else None
        currency = bool(CURRENCY_NEAR.search(before[-8:]))
        year_like = (
            "," not in raw
            and "." not in raw
            and 1900 <= value <= 2100
            and not (percent or scale or currency or negative)
        )
        found.append({
            "text": raw, "value": -value if negative else value, "percent": percent,
            "scale": scale, "currency": currency, "year_like": year_like,
        })  # fmt: skip
    return found


def pick_number(text: str) -> tuple[dict | None, int]:
    """The answer's number: the first one that is not a bare year (unless only years are given)."""
    numbers = parse_numbers(text)
    figures = [n for n in numbers if not n["year_like"]] or numbers
    return (figures[0] if figures else None), len(figures)


def round_half_up(x: float, decimals: int) -> Decimal:
    return Decimal(repr(x)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


def roundings(x: float, decimals: int) -> set[Decimal]:
    """`x` at `decimals` places, ties rounded up and to even, from its shortest repr and its exact binary
    value (analysts, Decimal and Python's format differ at ties: 2.675 is 2.68 or 2.67)."""
    step = Decimal(1).scaleb(-decimals)
    return {
        v.quantize(step, rounding=r) for v in (Decimal(repr(x)), Decimal(x)) for r in (ROUND_HALF_UP, ROUND_HALF_EVEN)
    }


def close(answer: float, gold: float, scale: float, decimals: int) -> tuple[bool, float]:
    """Within relative error REL_TOL, or equal at the gold's precision (at its scale)."""
    rel = abs(answer - gold) / abs(gold) if gold else abs(answer)
    if rel <= REL_TOL:
        return True, rel
    if not (math.isfinite(answer) and math.isfinite(gold)):
        return False, rel
    golds = roundings(gold / scale, decimals)
    if not any(golds):  # a gold that rounds to zero at its precision needs the relative tolerance
        return False, rel
    return bool(roundings(answer / scale, decimals) & golds), rel


def score_number(answer: str, gold: dict) -> dict:
    number, count = pick_number(answer)
    details: dict = {"numbers_in_answer": count}
    if number is None:
        return {**details, "passed": False, "reason": "no number in the answer"}
    g, scale, decimals = float(gold["value"]), float(gold.get("scale") or 1.0), int(gold.get("decimals", 0))
    details["parsed"] = number
    if gold.get("percent"):
        if number["scale"]:
            return {**details, "passed": False, "reason": "a scale word on a percentage"}
        # stated as a percent, or bare: as a percent (42.1) or as a fraction (0.421)
        tries = [number["value"]] if number["percent"] else [number["value"], number["value"] * 100]
        results = [close(v, g, 1.0, decimals) for v in tries]
        ok = any(r[0] for r in results)
        details["rel_error"] = min(r[1] for r in results)
        details["read_as"] = "percent" if number["percent"] or results[0][0] or not ok else "fraction"
        return {**details, "passed": ok, "reason": "" if ok else "not within tolerance"}
    if number["percent"]:
        return {**details, "passed": False, "reason": "a percentage given, but the gold is not a percentage"}
    if gold.get("ignore_scale"):  # imported FinQA golds are bare numbers in the table's unknown unit
        number = {**number, "scale": None}
    value = number["value"] * (number["scale"] or scale)
    details["read_as"] = value
    details["scale_assumed"] = number["scale"] is None and scale != 1.0
    ok, rel = close(value, g, scale, decimals)
    details["rel_error"] = rel if math.isfinite(rel) else None
    return {**details, "passed": ok, "reason": "" if ok else "not within tolerance (or wrong scale)"}


def normalise_text(text: str) -> str:
    """Lower case, no punctuation, articles or company suffixes, single spaces."""
    text = text.lower().replace("&", " and ")
    text = "".join(" " if ch in string.punctuation else ch for ch in text)
    return " ".join(w for w in text.split() if w not in ARTICLES and w not in SUFFIXES)


def token_f1(answer: str, gold: str) -> float:
    a, g = normalise_text(answer).split(), normalise_text(gold).split()
    common = sum(min(a.count(w), g.count(w)) for w in set(a) & set(g))
    if not a or not g or not common:
        return float(a == g)
    precision, recall = common / len(a), common / len(g)
    return 2 * precision * recall / (precision + recall)


def score_text(answer: str, gold: dict) -> dict:
    options = [gold["value"], *gold.get("aliases", [])]
    norm = normalise_text(answer)
    em = any(norm == normalise_text(o) for o in options)
    f1 = max(token_f1(answer, o) for o in options)
    return {"passed": em, "exact_match": em, "f1": f1, "normalised": norm, "reason": "" if em else "no exact match"}


def score_spans(answer: str, gold: dict) -> dict:
    parts = {normalise_text(p) for p in re.split(r"[;,\n]|\band\b", answer) if normalise_text(p)}
    want = {normalise_text(v) for v in gold["value"]}
    f1 = token_f1(" ".join(sorted(parts)), " ".join(sorted(want)))
    ok = parts == want
    return {"passed": ok, "exact_match": ok, "f1": f1, "reason": "" if ok else "spans differ"}


def score_yesno(answer: str, gold: dict) -> dict:
    words = normalise_text(answer).split()
    said = next(("yes" if w in YES else "no" for w in words if w in YES | NO), None)
    ok = said == gold["value"].lower()
    return {"passed": ok, "said": said, "reason": "" if ok else "wrong or no yes/no"}


def score(answer: str, gold: dict) -> dict:
    """The verdict on one answer: {"reward", "passed", "answer", "gold", ...details}."""
    answer = (answer or "").strip()
    if not answer:
        result = {"passed": False, "reason": "empty answer"}
    else:
        scorer = {"number": score_number, "yesno": score_yesno, "text": score_text, "spans": score_spans}
        result = scorer[gold["kind"]](answer, gold)
    return {"reward": 1.0 if result["passed"] else 0.0, "answer": answer[:500], "gold": gold, **result}


def main(argv: list[str]) -> int:
    with open(argv[1]) as f:
        gold = json.load(f)
    try:
        with open(argv[2], encoding="utf-8", errors="replace") as f:
            answer = f.read()
    except FileNotFoundError:
        answer = ""
    print(json.dumps(score(answer, gold)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
