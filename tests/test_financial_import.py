"""Importing FinQA- and TAT-QA-shaped files into financial-docs as held-out tasks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from ptrain_financial_docs import FinancialDocs
from ptrain_financial_docs.image.fscore import score
from ptrain_financial_docs.imported import import_file, load_file, load_imported, shape_of

from ptrain.errors import ConfigError
from ptrain.taskpack import check_task

FIXTURES = Path(__file__).parent / "fixtures" / "financial"


def by_id(tasks):
    return {t.id: t for t in tasks}


def test_finqa_items_become_test_tasks_with_their_own_one_page_filing():
    tasks = by_id(load_file(FIXTURES / "finqa_sample.json"))
    assert len(tasks) == 4 and all(
        t.split == "test" and t.category == "finqa" and not check_task(t) for t in tasks.values()
    )
    growth = tasks["imported/finqa/acme-2019-page-42-pdf-1"]
    gold = dict(growth.metadata["gold"])
    assert gold.pop("official") == {"dataset": "finqa", "exe_ans": 0.13636} and gold.pop("units") == [1e6]
    assert gold == pytest.approx({"kind": "number", "value": 13.636, "decimals": 1, "percent": True,
                                  "ignore_scale": True, "percent_as_fraction": True})  # fmt: skip
    assert growth.difficulty == "medium"
    page = json.loads(growth.files["filings/.index/pages.jsonl"])
    assert page["tables"][0]["rows"][0] == ["net sales", "$ 1,250", "$ 1,100"] and "higher volumes" in page["text"]
    assert tasks["imported/finqa/bolt-2017-page-18-pdf-4"].metadata["gold"] == {
        "kind": "yesno", "value": "yes", "official": {"dataset": "finqa", "exe_ans": "yes"}}  # fmt: skip


def test_finqa_percentages_accept_the_percent_or_the_fraction_and_ignore_unknown_scales():
    gold = by_id(load_file(FIXTURES / "finqa_sample.json"))["imported/finqa/acme-2019-page-42-pdf-1"].metadata["gold"]
    assert score("13.6%", gold)["passed"] and score("0.1364", gold)["passed"] and not score("14%", gold)["passed"]
    total = by_id(load_file(FIXTURES / "finqa_sample.json"))["imported/finqa/bolt-2017-page-18-pdf-3"].metadata["gold"]
    assert score("282", total)["passed"] and score("$282 thousand", total)["passed"]


def test_tatqa_questions_keep_their_scale_and_answer_type():
    tasks = by_id(load_file(FIXTURES / "tatqa_sample.json"))
    assert len(tasks) == 6 and {t.category for t in tasks.values()} == {"tatqa"}
    revenue = tasks["imported/tatqa/q-0001"].metadata["gold"]
    official = {"dataset": "tatqa", "answer": ["45,210"], "answer_type": "span", "scale": "thousand"}
    assert revenue == {"kind": "number", "value": 45_210_000.0, "scale": 1e3, "decimals": 0, "official": official}
    assert score("$45.21 million", revenue)["passed"] and score("45,210", revenue)["passed"]
    assert not score("45,210 million", revenue)["passed"]
    assert tasks["imported/tatqa/q-0003"].metadata["gold"]["percent"]
    assert tasks["imported/tatqa/q-0004"].metadata["gold"]["value"] == ["Services", "Licensing"]
    assert tasks["imported/tatqa/q-0006"].metadata["gold"]["kind"] == "text"
    assert {t.difficulty for t in tasks.values()} == {"easy", "medium", "hard"}


def test_every_imported_gold_answer_scores_one_and_an_empty_answer_zero():
    for task in load_imported(FIXTURES):
        assert score(task.metadata["display"], task.metadata["gold"])["reward"] == 1.0, task.id
        assert score("", task.metadata["gold"])["reward"] == 0.0


def test_a_file_of_another_shape_is_refused_with_what_was_expected(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"question": "?"}]))
    with pytest.raises(ConfigError, match="not a FinQA or TAT-QA file"):
        import_file(bad, tmp_path / "dest")
    assert shape_of([{"qa": {}, "table": []}]) == "finqa"


def test_imported_files_reach_the_taskpack_through_the_import_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("PTRAIN_FINANCIAL_IMPORT_DIR", str(tmp_path / "imports"))
    assert not any(t.id.startswith("imported/") for t in FinancialDocs().tasks("test"))
    import_file(FIXTURES / "finqa_sample.json")
    import_file(FIXTURES / "tatqa_sample.json")
    pack = FinancialDocs()
    imported = [t for t in pack.tasks("test") if t.id.startswith("imported/")]
    assert len(imported) == 10
    assert not any(t.id.startswith("imported/") for split in ("train", "dev") for t in pack.tasks(split))
    calls = pack.gold(imported[0])
    assert [c.name for c in calls] == ["read", "submit"]


def test_import_financial_command_copies_files_and_refuses_other_json(tmp_path):
    from typer.testing import CliRunner

    from ptrain.cli import app

    fixtures = Path(__file__).parent / "fixtures" / "financial"
    runner = CliRunner()
    done = runner.invoke(app, ["taskpacks", "import-financial", str(fixtures / "finqa_sample.json"),
                               "--dest", str(tmp_path / "imp")])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert (tmp_path / "imp" / "finqa_sample.json").is_file() and "questions" in done.output
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}')
    refused = runner.invoke(app, ["taskpacks", "import-financial", str(bad), str(fixtures / "tatqa_sample.json"),
                                  "--dest", str(tmp_path / "imp"), "--json"])  # fmt: skip
    assert refused.exit_code == 1  # the bad file refused, the good one imported all the same
    rows = {Path(r["file"]).name: r for r in json.loads(refused.output)["results"]}
    assert rows["bad.json"]["status"] == "refused" and "not a FinQA or TAT-QA file" in rows["bad.json"]["error"]
    assert rows["tatqa_sample.json"]["status"] == "imported" and (tmp_path / "imp" / "tatqa_sample.json").is_file()


def test_a_gold_that_cannot_pass_its_own_scoring_is_reported_at_import(tmp_path):
    from ptrain_financial_docs.imported import unpassable

    data = json.loads((FIXTURES / "tatqa_sample.json").read_text())
    question = dict(data[0]["questions"][3], uid="q-semicolon", answer=["Services; Licensing", "Hardware"])
    data[0]["questions"] = [data[0]["questions"][3], question]
    (tmp_path / "odd.json").write_text(json.dumps(data))
    tasks = load_file(tmp_path / "odd.json")
    assert [t.id for t in unpassable(tasks)] == ["imported/tatqa/q-semicolon"]


def test_a_multi_span_gold_whose_spans_hold_commas_passes_its_own_scoring():
    """TAT-QA's "Europe, Middle East and Africa" is one span: 80 of its golds could never pass before."""
    from ptrain_financial_docs.imported import tatqa_gold

    gold, shown = tatqa_gold({"answer": ["Europe, Middle East and Africa", "Americas"], "answer_type": "multi-span"})
    assert shown == "Europe, Middle East and Africa; Americas" and score(shown, gold)["passed"]
    assert not score("Europe; Middle East; Africa; Americas", gold)["passed"]
    assert not score("Europe, Middle East and Africa; Americas; Asia", gold)["passed"]


def test_a_bad_file_in_the_import_directory_is_skipped_with_a_warning(tmp_path):
    import warnings

    from ptrain_financial_docs.imported import FinancialImportWarning

    shutil.copy(FIXTURES / "tatqa_sample.json", tmp_path / "good.json")
    (tmp_path / "bad.json").write_text("{not json")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tasks = load_imported(tmp_path)
    assert len(tasks) == 6 and [w.category for w in caught] == [FinancialImportWarning]


def test_a_multi_span_gold_of_percentages_without_a_percent_scale_passes_its_own_scoring():
    """TAT-QA writes "39%" in the spans with no scale: such golds could never pass before."""
    gold = {"kind": "spans", "value": ["39%", "20%"]}
    assert score("39%, 20%", gold)["passed"] and not score("39%; 20%; 10%", gold)["passed"]
    assert not score("3.9%, 2.0%", gold)["passed"]
