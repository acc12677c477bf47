"""Questions with gold answers and gold programs: the shape, the arithmetic and the answer's format.

A `Question` names the figures it needs (`Fact`: company, report, fiscal year, line item, and the
section of the report that prints it) and a gold `program`: a Python expression over `f0, f1, ...`,
the figures as printed in the filings (in each filing's own unit), with any scale conversion
written out (`f0 * 1e6 / (f1 * 1e3)`). Running the program on the facts gives the gold answer,
which `gold_answer` turns into the scorer's gold (see `image/fscore.py`) and `display` into the
answer an analyst would write ("$4,512 million", "42.1%", "1.85", "yes", a company's name).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ptrain_financial_docs.image.fscore import round_half_up
from ptrain_financial_docs.universe import Company, as_reported, company, debt_note

# line item -> (how questions name it, section of the report that prints it)
ITEMS = {
    "revenue": ("total revenue", "income"),
    "cost_of_revenue": ("cost of revenue", "income"),
    "gross_profit": ("gross profit", "income"),
    "research_development": ("research and development expense", "income"),
    "sga": ("selling, general and administrative expense", "income"),
    "operating_income": ("operating income", "income"),
    "interest_expense": ("interest expense", "income"),
    "pretax_income": ("income before income taxes", "income"),
    "income_tax": ("provision for income taxes", "income"),
    "net_income": ("net income", "income"),
    "eps": ("diluted earnings per share", "income"),
    "cash": ("cash and cash equivalents", "balance"),
    "receivables": ("accounts receivable, net", "balance"),
    "inventory": ("inventories", "balance"),
    "current_assets": ("total current assets", "balance"),
    "total_assets": ("total assets", "balance"),
    "current_liabilities": ("total current liabilities", "balance"),
    "current_debt": ("current portion of long-term debt", "balance"),
    "long_term_debt": ("long-term debt, net of current portion", "balance"),
    "total_liabilities": ("total liabilities", "balance"),
    "total_equity": ("total stockholders' equity", "balance"),
    "retained_earnings": ("retained earnings", "balance"),
    "cfo": ("net cash provided by operating activities", "cashflow"),
    "capex": ("capital expenditures", "cashflow"),
    "dividends": ("dividends paid", "cashflow"),
    "buybacks": ("share repurchases", "cashflow"),
    "stock_comp": ("stock-based compensation expense", "cashflow"),
    "employees": ("number of full-time employees", "business"),
    "dps": ("dividends per share", "notes2"),
}


@dataclass(frozen=True)
class Fact:
    company: str  # company id
    report: int  # fiscal year of the annual report that prints it
    year: int  # fiscal year the figure is for
    item: (
        str  # a key of ITEMS, or "segment:<name>:revenue|operating_income", "geo:<region>", "maturity:<when>", "recast"
    )
    section: str  # report section (see report.SECTIONS)

    @property
    def doc(self) -> str:
        return f"{self.company}-10k-{self.report}"


@dataclass(frozen=True)
class Question:
    id: str  # "<company>/<what>", unique
    company: str  # the company whose split the question follows (every company in it shares that split)
    category: str  # extraction, growth, ratio, comparison, footnote
    difficulty: str
    text: str
    facts: tuple[Fact, ...]
    program: str  # Python expression over f0, f1, ...
    kind: str  # money, percent, points (percentage points), ratio, days, pershare, count, yesno, text
    aliases: tuple[str, ...] = ()  # other accepted forms of a text answer
    scale: float = 1.0  # money: the unit the answer is stated in (the filing's)


def fact_value(fact: Fact) -> float:
    """A figure exactly as the report prints it (in the filing's unit; EPS and DPS in dollars)."""
    c = company(fact.company)
    y = c.years[fact.year]
    if fact.item == "eps":
        return y.eps
    if fact.item == "dps":
        return y.dps
    if fact.item == "employees":
        return y.employees
    if fact.item == "recast":
        return c.recast[1]
    kind, _, rest = fact.item.partition(":")
    if kind == "segment":
        name, _, which = rest.rpartition(":")
        return y.segments[name][0 if which == "revenue" else 1]
    if kind == "geo":
        return y.geography[rest]
    if kind == "maturity":
        return dict(debt_note(c, fact.year).maturities)[rest]
    value = as_reported(c, fact.report, fact.year)[fact.item]
    return -value if fact.item in ("capex", "dividends", "buybacks") else value  # printed as outflows


def run_program(question: Question) -> Any:
    """The gold answer: the program evaluated on the facts (numbers only, no builtins)."""
    env = {f"f{i}": fact_value(f) for i, f in enumerate(question.facts)}
    return eval(question.program, {"__builtins__": {}, "abs": abs, "round": round}, env)  # noqa: S307


DECIMALS = {"money": 0, "percent": 1, "points": 1, "ratio": 2, "days": 1, "pershare": 2, "count": 0}


def gold_answer(question: Question) -> dict:
    """The scorer's gold for the question (see image/fscore.py)."""
    value = run_program(question)
    if question.kind == "yesno":
        return {"kind": "yesno", "value": value}
    if question.kind == "text":
        return {"kind": "text", "value": value, "aliases": list(question.aliases)}
    gold = {"kind": "number", "value": float(value), "decimals": DECIMALS[question.kind]}
    if question.kind == "money":
        gold.update(value=float(value) * question.scale, scale=question.scale)
    if question.kind in ("percent", "points"):
        gold["percent"] = True
    return gold


def display(question: Question, gold: Mapping[str, Any] | None = None) -> str:
    """The gold answer as an analyst writes it."""
    gold = gold or gold_answer(question)
    if gold["kind"] != "number":
        return str(gold["value"])
    v = round_half_up(gold["value"] / question.scale, gold["decimals"])  # as the scorer rounds
    sign, v = ("-" if v < 0 else ""), abs(v)
    if question.kind == "money":
        return f"{sign}${v:,} {({1e6: 'million', 1e3: 'thousand'})[question.scale]}"
    if question.kind in ("percent", "points"):
        return f"{sign}{v}%" if question.kind == "percent" else f"{sign}{v} percentage points"
    if question.kind == "pershare":
        return f"{sign}${v}"
    return f"{sign}{v:,}" + (" days" if question.kind == "days" else "")


def gold_code(question: Question) -> str:
    """The gold program as a Python cell (the `python` tool's input in gold solutions)."""
    lines = []
    for i, f in enumerate(question.facts):
        unit = "dollars" if f.item in ("eps", "dps") else "" if f.item == "employees" else company(f.company).unit
        lines.append(f"f{i} = {fact_value(f)!r}  # {f.item}, fiscal {f.year}, {f.doc} ({unit or 'count'})")
    lines.append(f"answer = {question.program}")
    lines.append("print(answer)")
    return "\n".join(lines)


def companies_of(question: Question) -> set[str]:
    return {f.company for f in question.facts}


def unit_word(c: Company) -> str:
    return c.unit.removesuffix("s")
