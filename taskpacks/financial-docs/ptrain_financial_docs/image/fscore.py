"""Scoring an analyst's answer against a gold answer: numbers, scales, signs, yes/no, text and spans.

Standard library only: this file (with official.py beside it) is copied into the sandbox image and
run there by the verifier (`python3 fscore.py GOLD_JSON ANSWER_TXT` prints the verdict as JSON), and
imported on the host by the taskpack and its tests, so the same code scores in both places. The
rules, the official mode and measured figures are in docs/financial_scoring.md.

A gold answer is a dict:
- `{"kind": "number", "value": 4.512e9, "scale": 1e6, "decimals": 0, "percent": false}`: `value` is
  absolute (dollars, days, a ratio); `scale` is the unit the gold is stated in (1e6 for "in millions")
  and `decimals` its precision at that scale. `percent: true` means `value` is in percent (42.1 for 42.1%).
  Imported FinQA golds add `ignore_scale` (the table's unit is unknown: the bare number is compared),
  `units` (the scale factors the excerpt itself uses: only those scale words are allowed) and
  `percent_as_fraction` (FinQA's reading: "250%" is 2.5).
- `{"kind": "yesno", "value": "yes"}`, `{"kind": "text", "value": "Acme Corp", "aliases": [...]}`,
  `{"kind": "spans", "value": ["a", "b"], "scale": 1e3}` (several short texts, any order).
- `official` (imported tasks): the dataset's own gold (`{"dataset": "tatqa", "answer", "answer_type",
  "scale"}` or `{"dataset": "finqa", "exe_ans"}`), scored by official.py beside the strict verdict.
- `mode`: "strict" (default: the reward is the strict pass/fail) or "official" (the reward is the
  official exact match).

Strict rules. A figure is read the way analysts write it: thousands separators, currency signs, a
minus, accounting parentheses or a sign word ("a loss of", "a decrease of", "fell by") for negatives,
%, and scale words (thousand/million/billion, k/m/bn). A figure with a scale word must be right in
absolute terms (1,234 thousand is not 1,234 million); a bare figure may be stated at the gold's scale
or in absolute terms ("4,512" or "4,512,000,000" for "$4,512 million"). A fraction equals a percentage
(0.421 for 42.1%) only when the gold is a percentage. A figure is right within relative error 1e-3 or
when equal to the gold at the gold's precision. Every figure in the answer (bare years aside) must be
right: an answer that lists candidates fails. Yes/no answers must say one of the two; spans are
aligned one-to-one by best F1 (as DROP's and TAT-QA's evaluations do) and pass when the answer holds
exactly the gold spans.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import string
import sys
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal

try:
    from ptrain_financial_docs.image import official
except ImportError:  # in the sandbox: `python3 -I fscore.py`, official.py beside it
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import official  # type: ignore[no-redef]

REL_TOL = 1e-3
SCALES = {
    "thousand": 1e3, "thousands": 1e3, "k": 1e3,
    "million": 1e6, "millions": 1e6, "mn": 1e6, "mm": 1e6, "m": 1e6, "mil": 1e6,
    "billion": 1e9, "billions": 1e9, "bn": 1e9, "b": 1e9,
    "trillion": 1e12, "trillions": 1e12, "tn": 1e12,
}  # fmt: skip
SCALE_WORDS = {1e3: "thousand", 1e6: "million", 1e9: "billion", 1e12: "trillion"}
NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\d])")
CURRENCY = r"(?:[$€£¥]|usd|us\$|eur|gbp)"
NEG_PREFIX = re.compile(rf"(?:[-−–]\s*{CURRENCY}?|{CURRENCY}\s*[-−–])\s*$", re.I)
PAREN_PREFIX = re.compile(rf"\(\s*{CURRENCY}?\s*$|{CURRENCY}\s*\(\s*$", re.I)
SIGN_WORDS = (
    r"loss|losses|deficit|negative|minus|decrease[sd]?|decline[sd]?|down|fell|dropped|drop|reduction|reduced|outflow"
)
LOSS_PREFIX = re.compile(
    rf"\b(?:{SIGN_WORDS})(?:\s+(?:of|by))?\s*(?:approximately\s+|about\s+)?{CURRENCY}?\s*$", re.I
)  # "fell to 5" states a level, not a change: no "to"
LOSS_SUFFIX = re.compile(r"^\s*\)?\s*(?:%|[a-z]+)?\s*(?:decrease|decline|reduction|drop|loss|deficit)\b", re.I)
PERCENT_SUFFIX = re.compile(r"^\s*\)?\s*(?:%|percent\b|per\s+cent\b|pct\b|percentage\s+points?\b|pp\b)", re.I)
SCALE_SUFFIX = re.compile(r"^\s*\)?\s*(" + "|".join(sorted(SCALES, key=len, reverse=True)) + r")\b", re.I)
PAREN_SUFFIX = re.compile(r"^\s*(?:%|[a-z]+)?\s*\)", re.I)
CURRENCY_NEAR = re.compile(rf"{CURRENCY}\s*[-−–(]?\s*$", re.I)
SPAN_SEPARATOR = re.compile(r"[\n;|]|(?<!\d),|,(?!\d{3}(?!\d))")
COARSE_SEPARATOR = re.compile(r"[\n;|]")  # spans that may hold commas
JOINER = re.compile(r"^\s*(?:and|&)\s+|^\s*[-*•]\s+(?=\D)", re.I)
YES = {"yes", "true", "correct", "y"}
NO = {"no", "false", "incorrect", "n"}
SUFFIXES = {"inc", "incorporated", "corp", "corporation", "co", "company", "ltd", "limited", "plc", "llc", "the"}
ARTICLES = {"a", "an", "the"}
MAX_SEGMENTATIONS = 64


def parse_numbers(text: str) -> list[dict]:
    """Every number in `text` with its sign, percent flag and scale, in order of appearance."""
    found = []
    for m in NUMBER.finditer(text):
        raw = m.group(1)
        value = float(raw.replace(",", ""))
        before, after = text[max(0, m.start() - 40) : m.start()], text[m.end() : m.end() + 24]
        paren = bool(PAREN_PREFIX.search(before)) and bool(PAREN_SUFFIX.match(after))
        percent = bool(PERCENT_SUFFIX.match(after))
        scale_match = None if percent else SCALE_SUFFIX.match(after)
        scale = SCALES[scale_match.group(1).lower()] if scale_match else None
        currency = bool(CURRENCY_NEAR.search(before[-8:]))
        plain = "," not in raw and "." not in raw and 1900 <= value <= 2100 and not (percent or scale or currency)
        paren = paren and not plain  # "(2019)" is a year in brackets, not a negative
        negative = paren or bool(NEG_PREFIX.search(before) or LOSS_PREFIX.search(before) or LOSS_SUFFIX.match(after))
        found.append({
            "text": raw, "value": -value if negative else value, "percent": percent,
            "scale": scale, "currency": currency, "year_like": plain and not negative,
        })  # fmt: skip
    return found


def figures_of(text: str) -> list[dict]:
    """The answer's figures: its numbers that are not bare years (all of them if only years are given)."""
    numbers = parse_numbers(text)
    return [n for n in numbers if not n["year_like"]] or numbers


def pick_number(text: str) -> tuple[dict | None, int]:
    """The answer's first figure and how many figures it states."""
    figures = figures_of(text)
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


def readings(number: dict, gold: dict) -> tuple[list[tuple[str, float]], str]:
    """The values one figure may mean for this gold, with their names, or none and why."""
    v, scale = number["value"], float(gold.get("scale") or 1.0)
    if gold.get("percent"):
        if number["scale"]:
            return [], "a scale word on a percentage"
        return ([("percent", v)] if number["percent"] else [("percent", v), ("fraction", v * 100)]), ""
    if number["percent"]:
        if gold.get("percent_as_fraction"):  # FinQA reads "250%" as 2.5
            return [("percent as fraction", v / 100)], ""
        return [], "a percentage given, but the gold is not a percentage"
    if gold.get("ignore_scale"):  # imported FinQA golds are bare numbers in the table's unknown unit
        if number["scale"] and number["scale"] not in gold.get("units", []):
            return [], "a scale word the filing does not use"
        return [("bare", v)], ""
    if number["scale"]:
        return [("with its scale word", v * number["scale"])], ""
    return [("at the gold's scale", v * scale)] + ([("absolute", v)] if scale != 1.0 else []), ""


def judge_figure(number: dict, gold: dict) -> dict:
    g, scale, decimals = float(gold["value"]), float(gold.get("scale") or 1.0), int(gold.get("decimals", 0))
    options, why = readings(number, gold)
    if not options:
        return {"passed": False, "reason": why}
    at = 1.0 if gold.get("percent") else scale
    results = [(name, value, *close(value, g, at, decimals)) for name, value in options]
    name, value, ok, rel = next((r for r in results if r[2]), results[0])
    return {"passed": ok, "read_as": value, "reading": name, "rel_error": rel if math.isfinite(rel) else None,
            "reason": "" if ok else "not within tolerance (or wrong scale)"}  # fmt: skip


def score_number(answer: str, gold: dict) -> dict:
    figures = figures_of(answer)
    details: dict = {"numbers_in_answer": len(figures)}
    if not figures:
        return {**details, "passed": False, "reason": "no number in the answer"}
    judged = [judge_figure(n, gold) for n in figures]
    details.update(parsed=figures[0], **{k: v for k, v in judged[0].items() if k != "passed"})
    if all(j["passed"] for j in judged):
        return {**details, "passed": True, "reason": ""}
    if len(figures) > 1 and any(j["passed"] for j in judged):
        return {**details, "passed": False, "reason": "several figures, not all of them the gold"}
    return {**details, "passed": False}


def normalise_text(text: str) -> str:
    """Lower case, no punctuation, articles or company suffixes, single spaces."""
    text = text.lower().replace("&", " and ")
    text = "".join(" " if ch in string.punctuation else ch for ch in text)
    return " ".join(w for w in text.split() if w not in ARTICLES and w not in SUFFIXES)


def token_f1(answer: str, gold: str) -> float:
    """DROP's bag-of-words F1 (sets of normalised tokens)."""
    a, g = set(normalise_text(answer).split()), set(normalise_text(gold).split())
    common = len(a & g)
    if not a or not g or not common:
        return float(a == g)
    precision, recall = common / len(a), common / len(g)
    return 2 * precision * recall / (precision + recall)


def score_text(answer: str, gold: dict) -> dict:
    options = [gold["value"], *gold.get("aliases", [])]
    norm = normalise_text(answer)
    em = any(norm == normalise_text(o) for o in options)
    f1 = max(token_f1(answer, o) for o in options)
    return {"passed": em, "f1": f1, "normalised": norm, "reason": "" if em else "no exact match"}


def piece_readings(piece: str) -> list[list[str]]:
    """One piece of an answer as one span, or split at some of its " and "s."""
    parts = re.split(r"\s+(?:and|&)\s+", piece)
    if len(parts) == 1 or len(parts) > 6:
        return [[piece]]
    out = []
    for joints in itertools.product((" and ", None), repeat=len(parts) - 1):
        spans = [parts[0]]
        for joint, part in zip(joints, parts[1:], strict=True):
            spans[-1:] = [spans[-1] + joint + part] if joint else [spans[-1], part]
        out.append(spans)
    return out


def segmentations(answer: str) -> list[list[str]]:
    """Ways to read an answer as a list of spans: split at newlines, semicolons and commas (not the
    ones inside "1,496"), and at any " and " or none ("Sales and marketing" may stay whole). An answer
    with semicolons or newlines is also read split at those alone, so a span may hold commas
    ("Europe, Middle East and Africa; Americas")."""
    readings = [SPAN_SEPARATOR.split(answer.strip())]
    if COARSE_SEPARATOR.search(answer.strip()):
        readings.append(COARSE_SEPARATOR.split(answer.strip()))
    out = []
    for split in readings:
        pieces = [JOINER.sub("", p).strip().rstrip(".").strip() for p in split]
        options = [piece_readings(p) for p in pieces if p]
        if math.prod(len(o) for o in options) > MAX_SEGMENTATIONS:
            choices = [[o[0] for o in options], [o[-1] for o in options]]
        else:
            choices = list(itertools.product(*options))
        out += [[s.strip() for part in choice for s in part if s.strip()] for choice in choices]
    return out


def span_gold(text: str, gold: dict) -> dict | None:
    """A gold span that is one figure ("$1,496") as a number gold at the spans' scale, else None."""
    numbers = parse_numbers(text)
    rest = re.sub(r"[\s$€£¥%(),.\-−–]|usd", "", NUMBER.sub("", text).lower())
    if len(numbers) != 1 or rest not in ("", *SCALES, "percent"):
        return None
    n, scale = numbers[0], float(gold.get("scale") or 1.0)
    decimals = len(n["text"].split(".")[1]) if "." in n["text"] else 0
    if gold.get("percent") or "%" in text:  # a span written "39%" is a percentage whatever the scale says
        return {"kind": "number", "value": n["value"], "percent": True, "decimals": decimals}
    return {"kind": "number", "value": n["value"] * (n["scale"] or scale), "scale": scale, "decimals": decimals}


def best_assignment(weights: list[list[float]]) -> float:
    """The largest total weight of a one-to-one matching of rows to columns (exact for small
    matrices, greedy beyond ten on the smaller side)."""
    if not weights or not weights[0]:
        return 0.0
    if len(weights) < len(weights[0]):
        weights = [list(col) for col in zip(*weights, strict=True)]  # rows: the larger side
    k = len(weights[0])
    if k > 10:
        pairs = sorted(((w, i, j) for i, row in enumerate(weights) for j, w in enumerate(row)), reverse=True)
        used_i, used_j, total = set(), set(), 0.0
        for w, i, j in pairs:
            if i not in used_i and j not in used_j:
                used_i.add(i), used_j.add(j)
                total += w
        return total
    best = {0: 0.0}
    for row in weights:
        nxt = dict(best)
        for mask, total in best.items():
            for j, w in enumerate(row):
                if not mask >> j & 1 and w > 0:
                    key = mask | 1 << j
                    nxt[key] = max(nxt.get(key, 0.0), total + w)
        best = nxt
    return max(best.values())


def align_spans(predicted: list[str], golds: list[str], gold: dict) -> tuple[bool, float]:
    """(exactly the gold spans, DROP F1 over the one-to-one alignment) for one reading of the answer."""
    numeric = [span_gold(g, gold) for g in golds]
    exact, f1 = [], []
    for g, num in zip(golds, numeric, strict=True):
        if num is not None:
            row = [float(score_number(p, num)["passed"]) for p in predicted]
            exact.append(row), f1.append(row)
        else:
            exact.append([float(normalise_text(p) == normalise_text(g)) for p in predicted])
            f1.append([token_f1(p, g) for p in predicted])
    n = max(len(golds), len(predicted))
    matched = len(predicted) == len(golds) and best_assignment(exact) == len(golds)
    return matched, best_assignment(f1) / n if n else 0.0


def score_spans(answer: str, gold: dict) -> dict:
    golds = [str(v) for v in gold["value"]]
    (passed, f1), spans = max((align_spans(s, golds, gold), s) for s in segmentations(answer))
    return {"passed": passed, "f1": round(f1, 4), "spans": spans[:50], "reason": "" if passed else "spans differ"}


def said_yes_or_no(answer: str) -> str | None:
    """Yes or no when the answer says exactly one of them, else None ("yes and no" says nothing)."""
    words = set(normalise_text(answer).split())
    said = {"yes" for w in words if w in YES} | {"no" for w in words if w in NO}
    return said.pop() if len(said) == 1 else None


def score_yesno(answer: str, gold: dict) -> dict:
    said = said_yes_or_no(answer)
    ok = said == gold["value"].lower()
    return {"passed": ok, "said": said, "reason": "" if ok else "wrong, both or no yes/no"}


def one_figure(answer: str) -> dict | None:
    """The answer's figure when it states one value (several forms of it allowed), else None."""
    figures = figures_of(answer)
    values = {round(n["value"] * (n["scale"] or 1.0), 6) for n in figures if not n["percent"]}
    values |= {round(n["value"] / 100, 8) for n in figures if n["percent"]}
    return figures[0] if len(values) == 1 else None


def official_prediction(answer: str, gold: dict) -> tuple[list[str], str]:
    """The answer as a TAT-QA prediction: (answers, scale)."""
    if gold["kind"] == "number" or gold["official"].get("answer_type") in ("arithmetic", "count"):
        n = one_figure(answer)
        if n is None:
            return [], ""
        scale = "percent" if n["percent"] else SCALE_WORDS.get(n["scale"], "") if n["scale"] else ""
        return [("-" if n["value"] < 0 else "") + n["text"]], scale
    return [answer.strip()], ""


def official_score(answer: str, gold: dict) -> dict:
    spec = gold["official"]
    if spec["dataset"] == "finqa":
        if isinstance(spec["exe_ans"], str):
            prediction = said_yes_or_no(answer)
        else:
            n = one_figure(answer)
            prediction = None if n is None or n["scale"] else n["value"] / 100 if n["percent"] else n["value"]
        return {"metric": "finqa-official", **official.finqa_metrics(prediction, spec["exe_ans"]), "pred": prediction}
    pred, scale = official_prediction(answer, gold)
    candidates = [(pred, scale)]
    if gold["kind"] == "spans":
        candidates += [(s, "") for s in segmentations(answer)]
    metrics, (pred, scale) = max(((official.tatqa_metrics(p, s, spec), (p, s)) for p, s in candidates),
                                 key=lambda r: (r[0]["em"], r[0]["f1"]))  # fmt: skip
    return {"metric": "tatqa-official", **metrics, "pred": pred[:50], "pred_scale": scale}


def score(answer: str, gold: dict) -> dict:
    """The verdict on one answer: {"reward", "passed", "metric", "em", "f1", "answer", "gold", ...details}."""
    answer = (answer or "").strip()
    if not answer:
        result = {"passed": False, "reason": "empty answer"}
    else:
        scorer = {"number": score_number, "yesno": score_yesno, "text": score_text, "spans": score_spans}
        result = scorer[gold["kind"]](answer, gold)
    result = {"metric": "strict", "em": float(result["passed"]), "f1": float(result["passed"]), **result}
    if gold.get("official"):
        result["official"] = official_score(answer, gold) if answer else {"em": 0.0, "f1": 0.0}
        result["official"].setdefault("metric", f"{gold['official']['dataset']}-official")
        if gold.get("mode") == "official":
            strict = {"strict_passed": result["passed"], "strict_f1": result["f1"]}
            off = result["official"]
            result.update(strict, metric=off["metric"], em=off["em"], f1=off["f1"], passed=off["em"] == 1.0)
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
