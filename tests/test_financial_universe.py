"""The financial-docs universe: balanced statements, determinism, splits by company, and the questions over it."""

from __future__ import annotations

from collections import Counter

import pytest
from ptrain_financial_docs.questions import display, gold_answer, gold_code, run_program
from ptrain_financial_docs.report import SECTIONS, build_report
from ptrain_financial_docs.templates import all_questions
from ptrain_financial_docs.universe import as_reported, company, debt_note, make_company, universe

from ptrain.taskpack import split_of

COMPANY_YEARS = [(c, year) for c in universe() for year in c.years if year - 1 in c.years]


def test_the_universe_has_thirty_companies_in_several_industries_with_three_to_five_reports():
    companies = universe()
    assert len(companies) >= 30 and len({c.id for c in companies}) == len(companies)
    assert len({c.industry for c in companies}) >= 5
    assert all(3 <= len(c.reported) <= 5 for c in companies)
    assert {c.unit for c in companies} == {"millions", "thousands"}
    assert any(c.recast for c in companies)


@pytest.mark.parametrize("c,year", COMPANY_YEARS, ids=lambda v: getattr(v, "id", v))
def test_every_company_year_obeys_the_accounting_identities(c, year):
    y, p = c.years[year].items, c.years[year - 1].items
    assert y["total_assets"] == y["total_liabilities"] + y["total_equity"] == y["total_liabilities_equity"]
    assert y["total_assets"] == y["current_assets"] + y["ppe"] + y["goodwill"] + y["other_assets"]
    assert y["retained_earnings"] == p["retained_earnings"] + y["net_income"] + y["dividends"]  # dividends are outflows
    assert y["cash"] - p["cash"] == y["cfo"] + y["cfi"] + y["cff"] + y["fx_effect"] == y["net_change_cash"]
    assert y["cash_begin"] == p["cash"] and y["cash_end"] == y["cash"]
    assert y["gross_profit"] == y["revenue"] - y["cost_of_revenue"]
    assert (
        y["net_income"]
        == y["revenue"]
        - y["cost_of_revenue"]
        - y["research_development"]
        - y["sga"]
        - y["interest_expense"]
        + y["other_income"]
        - y["income_tax"]
    )
    assert sum(r for r, _ in c.years[year].segments.values()) == y["revenue"]
    assert sum(o for _, o in c.years[year].segments.values()) == y["operating_income"]
    assert sum(c.years[year].geography.values()) == y["revenue"]
    note = debt_note(c, year)
    debt = y["current_debt"] + y["long_term_debt"]
    assert sum(v for _, v in note.instruments) == sum(v for _, v in note.maturities) == debt
    assert note.maturities[0] == (str(year + 1), y["current_debt"])


def test_a_restated_prior_year_moves_costs_but_keeps_operating_income():
    c = next(c for c in universe() if c.recast)
    report_year, amount = c.recast
    original, restated = as_reported(c, report_year - 1, report_year - 1), as_reported(c, report_year, report_year - 1)
    assert restated["cost_of_revenue"] == original["cost_of_revenue"] + amount
    assert restated["sga"] == original["sga"] - amount
    assert restated["gross_profit"] == restated["revenue"] - restated["cost_of_revenue"]
    assert restated["operating_income"] == original["operating_income"]
    header = build_report(c, report_year).pages[2][1][1].header
    assert header[2] == f"{report_year - 1} (As Restated)"


def test_the_universe_is_the_same_every_time_it_is_made():
    assert make_company(3, 20240, set()) == make_company(3, 20240, set())
    assert build_report(universe()[5], universe()[5].reported[0]) == build_report(
        make_company(5, 20240, {c.ticker for c in universe()[:5]}), universe()[5].reported[0]
    )


def test_questions_split_by_company_and_cross_company_questions_stay_within_one_split():
    questions = all_questions()
    assert len({q.id for q in questions}) == len(questions) > 1000
    for q in questions:
        splits = {company(f.company).split for f in q.facts}
        assert splits == {split_of(q.company)}, q.id
    assert {company(q.company).split for q in questions} == {"train", "dev", "test"}


def test_questions_cover_every_category_and_tier():
    questions = all_questions()
    assert set(Counter(q.category for q in questions)) == {"extraction", "growth", "ratio", "comparison", "footnote"}
    assert set(Counter(q.difficulty for q in questions)) == {"easy", "medium", "hard"}
    assert len({q.text.split()[0] for q in questions}) >= 8  # varied phrasing


def test_the_gold_code_cell_computes_the_gold_program_answer():
    for q in all_questions()[::37]:
        scope: dict = {}
        code = gold_code(q).replace("print(answer)", "")
        exec(code, scope)
        assert scope["answer"] == run_program(q), q.id
        assert display(q, gold_answer(q))


def test_money_golds_are_absolute_and_keep_the_filing_unit():
    q = next(q for q in all_questions() if q.kind == "money" and company(q.company).unit == "thousands")
    gold = gold_answer(q)
    assert gold["scale"] == 1e3 and gold["value"] == run_program(q) * 1e3
    assert display(q).endswith(" thousand")


def test_every_fact_a_question_needs_is_printed_in_a_report_that_exists():
    reports = {f"{c.id}-10k-{year}" for c in universe() for year in c.reported}
    for q in all_questions():
        for f in q.facts:
            assert f.doc in reports and f.section in SECTIONS, (q.id, f)
            assert f.year in (f.report, f.report - 1), (q.id, f)
