"""The official TAT-QA and FinQA metrics (image/official.py), and the official mode of the scorer.

Expected values are worked out by hand from the evaluation scripts' logic (TAT-QA's tatqa_metric.py
and tatqa_utils.py, FinQA's evaluate.py); the comment on each case says how."""

from __future__ import annotations

import pytest
from ptrain_financial_docs.image.fscore import score
from ptrain_financial_docs.image.official import finqa_metrics, normalise, tatqa_metrics


def tatqa(answer, answer_type: str, scale: str = "") -> dict:
    return {"dataset": "tatqa", "answer": answer, "answer_type": answer_type, "scale": scale}


@pytest.mark.parametrize(
    "prediction, pred_scale, gold, em, f1",
    [
        # "1760" thousand -> "%.4f" % (1760 * 1000) on both sides
        (["1760"], "thousand", tatqa(1760, "arithmetic", "thousand"), 1.0, 1.0),
        # no scale: "1760.0000" against "1760000.0000"; arithmetic, so F1 is the exact match
        (["1760"], "", tatqa(1760, "arithmetic", "thousand"), 0.0, 0.0),
        # an absolute figure with no scale is the same string: 1760000.0000
        (["1,760,000"], "", tatqa(1760, "arithmetic", "thousand"), 1.0, 1.0),
        # rounded to 2 decimals before the scale: round(7.956, 2) * 0.01 -> "0.0796"
        (["7.956"], "percent", tatqa(7.96, "arithmetic", "percent"), 1.0, 1.0),
        (["7.9"], "percent", tatqa(7.96, "arithmetic", "percent"), 0.0, 0.0),
        # a bare fraction is also tried unrounded: to_number("0.0796") -> "0.0796"
        (["0.0796"], "", tatqa(7.96, "arithmetic", "percent"), 1.0, 1.0),
        # accounting parentheses: to_number("(134)") == -134 -> "-134.0000"
        (["(134)"], "", tatqa(-134, "arithmetic"), 1.0, 1.0),
        (["2"], "", tatqa(2, "count"), 1.0, 1.0),
        # multi-span: both sides sorted and joined -> "licensing services"; one of two tokens: P 1, R 0.5
        (["Services"], "", tatqa(["Services", "Licensing"], "multi-span"), 0.0, 0.67),
        (["Services", "Licensing"], "", tatqa(["Services", "Licensing"], "multi-span"), 1.0, 1.0),
        # a span: P 1, R 2/3 -> 0.8
        (["hardware sales"], "", tatqa(["lower hardware sales"], "span"), 0.0, 0.8),
        # a number span keeps its scale: "45,210" thousand -> "45210000.0000"
        (["45.21 million"], "", tatqa(["45,210"], "span", "thousand"), 1.0, 1.0),
        ([], "", tatqa(["45,210"], "span", "thousand"), 0.0, 0.0),
    ],
)
def test_tatqa_metrics_match_the_official_scripts_logic(prediction, pred_scale, gold, em, f1):
    assert tatqa_metrics(prediction, pred_scale, gold) == {"em": em, "f1": f1}


def test_tatqa_normalisation_keeps_the_scripts_number_printing():
    assert normalise("(134)") == "-134"  # an int stays an int, as upstream's scale factors are ints
    assert normalise("45210000.0000") == "45210000.0"
    assert normalise("The Services, and Licensing.") == "services and licensing"


def test_finqa_execution_accuracy_reads_percentages_as_fractions_at_five_decimals():
    assert finqa_metrics(0.13636, 0.13636) == {"em": 1.0, "f1": 1.0}
    assert finqa_metrics(0.136, 0.13636)["em"] == 0.0  # rounded by the answerer: not the executed value
    assert finqa_metrics("yes", "yes")["em"] == 1.0 and finqa_metrics(None, "yes")["em"] == 0.0


TATQA_SPANS = {
    "kind": "spans",
    "value": ["Services", "Licensing"],
    "official": tatqa(["Services", "Licensing"], "multi-span"),
}
TATQA_REVENUE = {"kind": "number", "value": 45_210_000.0, "scale": 1e3, "decimals": 0,
                 "official": tatqa(["45,210"], "span", "thousand")}  # fmt: skip
FINQA_GROWTH = {"kind": "number", "value": 13.636, "decimals": 1, "percent": True, "ignore_scale": True,
                "units": [1e6], "percent_as_fraction": True, "official": {"dataset": "finqa", "exe_ans": 0.13636}}  # fmt: skip


def test_every_imported_verdict_reports_the_official_metric_beside_the_strict_reward():
    verdict = score("Services", TATQA_SPANS)
    assert verdict["metric"] == "strict" and verdict["reward"] == 0.0 and verdict["f1"] == 0.5  # DROP: 1 of 2
    assert verdict["official"] == {"metric": "tatqa-official", "em": 0.0, "f1": 0.67, "pred": ["Services"],
                                   "pred_scale": ""}  # fmt: skip
    bare = score("45,210", TATQA_REVENUE)
    assert bare["reward"] == 1.0 and bare["official"]["em"] == 0.0  # strict takes it at the gold's scale
    assert score("13.6%", FINQA_GROWTH)["official"] == {"metric": "finqa-official", "em": 0.0, "f1": 0.0, "pred": 0.136}


def test_official_mode_makes_the_official_exact_match_the_reward_and_says_so():
    official = {**TATQA_REVENUE, "mode": "official"}
    bare, scaled = score("45,210", official), score("$45,210 thousand", official)
    assert bare["reward"] == 0.0 and bare["metric"] == "tatqa-official" and bare["strict_passed"] is True
    assert scaled["reward"] == 1.0 and scaled["em"] == 1.0 and scaled["f1"] == 1.0
    finqa = {**FINQA_GROWTH, "mode": "official"}
    assert score("0.13636", finqa)["reward"] == 1.0 and score("13.636%", finqa)["reward"] == 1.0
    assert score("13.6%", finqa)["reward"] == 0.0 and score("0.13636 million", finqa)["reward"] == 0.0


def test_official_mode_pays_nothing_for_listed_candidates_or_both_options():
    official = {**TATQA_REVENUE, "mode": "official"}
    assert score("45,210 thousand, 41,876 thousand", official)["reward"] == 0.0
    spans = {**TATQA_SPANS, "mode": "official"}
    assert score("Services, Licensing, Hardware", spans)["reward"] == 0.0
    assert score("Licensing and Services", spans)["reward"] == 1.0
    yes = {"kind": "yesno", "value": "yes", "official": {"dataset": "finqa", "exe_ans": "yes"}, "mode": "official"}
    assert score("yes and no", yes)["reward"] == 0.0 and score("Yes.", yes)["reward"] == 1.0
