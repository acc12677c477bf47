"""The TAT-QA and FinQA evaluation scripts' metrics, reimplemented from their published logic.

Standard library only (copied into the sandbox image beside fscore.py). Written from the logic of
TAT-QA's `tatqa_metric.py` / `tatqa_utils.py` (NExTplusplus/TAT-QA) and FinQA's
`code/evaluate/evaluate.py` (czyssrs/FinQA); no code of theirs is included. The quirks that change
numbers are kept on purpose:

TAT-QA. A prediction is `(answer or list of answers, scale)` with scale one of "", thousand,
million, billion, percent. Gold and prediction are each turned into ONE string: the answers sorted,
each number rounded to 2 decimals and then multiplied by its scale ("45,210" thousand ->
"45210000.0000"), other text suffixed with the scale word, all joined by spaces. Exact match is
equality of the normalised strings (lower case, punctuation and articles removed, numbers
re-printed by Python's `str`, so -134 stays an int and 45210000.0 a float); F1 is the set-of-tokens
F1 rounded to 2 decimals, and for arithmetic and count questions F1 is the exact match. A bare
prediction with no scale is also tried unrounded as a fraction ("0.0796" for 7.96 percent).

FinQA. Execution accuracy: the predicted value, rounded to 5 decimals, equals `exe_ans`; a number
is read as `str_to_num` reads one (commas dropped, a trailing % divides by 100, anything else makes
the prediction invalid); yes/no answers compare as words. FinQA reports no F1; `f1` mirrors `em`.
"""

from __future__ import annotations

import math
import re
import string

NUM_JUNK = set("'\"\\$€£¥%(),[]")
FIRST_NUMBER = re.compile(r"([+-]?\d+(\.\d+)?)|([+-]?\.\d+)")
PAREN_NEGATIVE = re.compile(r"(\([\d.\s]+\))")
PERCENT_SIGN = re.compile(r"([\d.\s]+%)")
NUMBER_WORD = re.compile(r"([\d.]+\s?[a-zA-Z]+)")
ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def scale_factor(word: str) -> int | float:
    """TAT-QA's factor for a scale word (an int except for percent, as upstream: it shows in str())."""
    word = word.lower()
    for name, factor in (("hundred", 100), ("thousand", 1000), ("million", 10**6), ("billion", 10**9)):
        if name in word:
            return factor
    return 0.01 if "percent" in word else 1


def clean(text: str) -> str:
    return "".join(ch for ch in str(text) if ch not in NUM_JUNK)


def is_number(text: str) -> bool:
    words = " ".join(clean(w) for w in text.split()).split()
    if not words:
        return False
    try:
        value = float(words[0])
    except ValueError:
        return False
    if math.isnan(value):
        return False
    return not (len(words) >= 2 and scale_factor(words[1]) == 1)


def first_number(text: str) -> int | float | None:
    m = FIRST_NUMBER.search(clean(text))
    if m is None or not m.group(1):
        return None
    return float(m.group(1)) if "." in m.group(1) else int(m.group(1))


def to_number(text: str) -> int | float | None:
    num = first_number(text)
    if num is None:
        return None
    word = NUMBER_WORD.search(text)
    scale = scale_factor(word.group(0)) if word else 1
    negative = -1 if PAREN_NEGATIVE.search(text.strip()) else 1
    percent = 0.01 if PERCENT_SIGN.search(text.strip()) else 1
    return round(num * scale * negative * percent, 4)


def normalise(text: str) -> str:
    parts = []
    for token in text.split(" "):
        token = token.lower()
        if not is_number(token):
            token = "".join(ch for ch in token if ch not in string.punctuation)
        if is_number(token):
            token = str(to_number(token))
        token = " ".join(ARTICLES.sub(" ", token).split())
        if token.strip():
            parts.append(token)
    return " ".join(parts).strip()


def answer_string(answers: list, scale: str) -> str:
    out = []
    for answer in sorted(answers):
        text = str(answer)
        if is_number(text):
            num = to_number(text)
            if num is None:
                text = f"{text} {scale}" if scale else text
            elif "%" in text:
                text = f"{num:.4f}"
            else:
                text = f"{round(num, 2) * scale_factor(scale):.4f}"
        elif scale:
            text = f"{text} {scale}"
        out.append(text)
    return " ".join(out)


def bag_f1(predicted: set[str], gold: set[str]) -> float:
    common = len(predicted & gold)
    precision = common / len(predicted) if predicted else 1.0
    recall = common / len(gold) if gold else 1.0
    return 0.0 if precision == 0.0 and recall == 0.0 else 2 * precision * recall / (precision + recall)


def em_f1(predicted: str, gold: str) -> tuple[float, float]:
    p, g = normalise(predicted), normalise(gold)
    return float(p == g), round(bag_f1(set(p.split()), set(g.split())), 2)


def tatqa_gold_answers(answer, answer_type: str) -> list:
    if answer_type in ("span", "multi-span"):
        return list(answer) if isinstance(answer, (list, tuple)) else [answer]
    if answer_type == "count":
        return [str(int(float(answer)))]
    return [str(answer)]


def tatqa_metrics(prediction: list[str], pred_scale: str, gold: dict) -> dict:
    """TAT-QA's exact match and F1 for one question; `gold` has the dataset's answer, answer_type, scale."""
    answer_type, scale = gold.get("answer_type", "span"), gold.get("scale", "") or ""
    golds = tatqa_gold_answers(gold["answer"], answer_type)
    if not prediction or not golds:
        return {"em": 0.0, "f1": 0.0}
    candidates = [answer_string(prediction, pred_scale)]
    if len(prediction) == 1 and not pred_scale and "%" not in prediction[0] and is_number(prediction[0]):
        num = to_number(prediction[0])
        if num is not None:
            candidates.append(f"{num:.4f}")
    em, f1 = max(em_f1(c, answer_string(golds, scale)) for c in candidates)
    return {"em": em, "f1": em if answer_type in ("arithmetic", "count") else f1}


def str_to_num(text: str) -> float | None:
    text = text.replace(",", "")
    try:
        return float(text)
    except ValueError:
        pass
    if "%" in text:
        try:
            return float(text.replace("%", "")) / 100.0
        except ValueError:
            return None
    return None


def finqa_metrics(prediction: float | str | None, exe_ans) -> dict:
    """FinQA's execution accuracy for one question (`f1` mirrors it: FinQA reports none)."""
    if isinstance(exe_ans, str) and exe_ans.lower() in ("yes", "no"):
        em = float(isinstance(prediction, str) and prediction == exe_ans.lower())
    else:
        em = float(isinstance(prediction, float) and round(prediction, 5) == round(float(exe_ans), 5))
    return {"em": em, "f1": em}
