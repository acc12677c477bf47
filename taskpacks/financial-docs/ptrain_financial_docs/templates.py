"""The question templates: which questions each company and year gets, in varied phrasing.

Five categories in three tiers:
- extraction (easy): one figure from one statement, or the head count from the business section;
- growth (medium: year over year from one report; hard: CAGR across reports);
- ratio (medium): margins, current ratio, debt to equity, ROE and ROA on average balances, days
  sales outstanding, inventory turnover, interest coverage, free cash flow;
- comparison (medium: one company across years; hard: two companies, possibly in different units),
  always as a figure (a gap or a ratio), never yes/no or "which of the two", so a guess pays nothing;
- footnote (medium/hard): debt maturities, geographic revenue, the pretax margin, dividends
  per share, segment margins, and the restatement (how much was moved; margins as restated or as
  originally reported).
Phrasing is drawn from several forms per template by a seeded generator; definitions that analysts
disagree on (average or year-end balances, 365-day years) are stated in the question.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from ptrain_financial_docs.questions import ITEMS, Fact, Question
from ptrain_financial_docs.universe import Company, universe

ASK = (
    "What was {name}'s {label} for fiscal {year}?",
    "How much {label} did {short} report for fiscal {year}?",
    "According to its fiscal {year} annual report, what was {name}'s {label}?",
    "{short} ({ticker}): {label}, fiscal {year}?",
    "Find {short}'s {label} for the fiscal year ended {year_end}, {year}.",
)
EXTRACT = ("revenue", "net_income", "total_assets", "cash", "long_term_debt", "cfo", "capex", "total_equity",
           "operating_income", "research_development", "inventory", "receivables", "eps", "employees")  # fmt: skip
RECAST_ITEMS = {"cost_of_revenue", "gross_profit", "sga"}


def money_kind(item: str) -> str:
    return {"eps": "pershare", "dps": "pershare", "employees": "count"}.get(item, "money")


def fact(c: Company, item: str, year: int, report: int | None = None, section: str | None = None) -> Fact:
    return Fact(c.id, report or year, year, item, section or ITEMS[item][1])


def words(c: Company, year: int) -> dict:
    return {"name": c.name, "short": c.short_name, "ticker": c.ticker, "year": year, "year_end": c.year_end}


def originally(c: Company, year: int, items: set[str]) -> str:
    """ " as originally reported" where a later report restated the figure."""
    return " as originally reported" if items & RECAST_ITEMS and c.recast and c.recast[0] == year + 1 else ""


def make(
    c: Company, slug: str, category: str, difficulty: str, text: str, facts, program: str, kind: str, **kw
) -> Question:
    scale = c.scale if kind == "money" else 1.0
    text = text.replace("s's ", "s' ")  # Holdings' revenue
    return Question(f"{c.id}/{slug}", c.id, category, difficulty, text, tuple(facts), program, kind, scale=scale, **kw)


def extraction(c: Company, year: int, rng: random.Random) -> Iterator[Question]:
    y = c.years[year]
    items = [i for i in EXTRACT if not (i in ("research_development", "inventory") and y[i] == 0)]
    for item in rng.sample(items, 3):
        text = rng.choice(ASK).format(label=ITEMS[item][0], **words(c, year))
        yield make(c, f"fy{year}-{item}", "extraction", "easy", text, [fact(c, item, year)], "f0", money_kind(item))


def growth(c: Company, year: int, rng: random.Random) -> Iterator[Question]:
    item = rng.choice(("revenue", "net_income", "operating_income", "total_assets", "cfo"))
    if c.years[year - 1][item] > 0:
        label = ITEMS[item][0]
        text = rng.choice((
            "By what percentage did {short}'s {label} change from fiscal {prev} to fiscal {year}?",
            "What was the year-over-year growth rate of {name}'s {label} in fiscal {year}?",
            "Compute {short}'s fiscal {year} {label} growth versus fiscal {prev}, in percent.",
        )).format(label=label, prev=year - 1, **words(c, year))  # fmt: skip
        facts = [fact(c, item, year), fact(c, item, year - 1, report=year)]
        yield make(c, f"fy{year}-{item}-growth", "growth", "medium", text, facts, "(f0 - f1) / f1 * 100", "percent")
    first, last = c.reported[0], c.reported[-1]
    if year == last and last - first >= 2:
        item = rng.choice(("revenue", "total_assets"))
        text = rng.choice((
            "What was {short}'s compound annual growth rate (CAGR) of {label} from fiscal {first} to fiscal {year}?",
            "Calculate the CAGR of {name}'s {label} between fiscal {first} and fiscal {year}.",
        )).format(label=ITEMS[item][0], first=first, **words(c, year))  # fmt: skip
        facts = [fact(c, item, first), fact(c, item, last)]
        program = f"((f1 / f0) ** (1 / {last - first}) - 1) * 100"
        yield make(c, f"fy{first}-fy{last}-{item}-cagr", "growth", "hard", text, facts, program, "percent")


def ratio(c: Company, year: int, rng: random.Random) -> Iterator[Question]:
    y, p = c.years[year], c.years[year - 1]
    w = words(c, year)
    options = []
    for item, label in (
        ("gross_profit", "gross margin"),
        ("operating_income", "operating margin"),
        ("net_income", "net profit margin"),
    ):
        options.append((f"{label.split()[0]}-margin", f"What was {{short}}'s {label}{originally(c, year, {item})} in fiscal {{year}}?",
                        [fact(c, item, year), fact(c, "revenue", year)], "f0 / f1 * 100", "percent"))  # fmt: skip
    options.append(("current-ratio", "What was {name}'s current ratio at the end of fiscal {year}?",
                    [fact(c, "current_assets", year), fact(c, "current_liabilities", year)], "f0 / f1", "ratio"))  # fmt: skip
    if y["total_equity"] > 0 and p["total_equity"] > 0:
        options.append(("roe", "What was {short}'s return on equity for fiscal {year}, using the average of beginning and "
                        "ending total stockholders' equity?", [fact(c, "net_income", year), fact(c, "total_equity", year),
                        fact(c, "total_equity", year - 1, report=year)], "f0 / ((f1 + f2) / 2) * 100", "percent"))  # fmt: skip
        options.append(("debt-to-equity", "What was {short}'s total debt (current portion plus long-term) to equity ratio at "
                        "the end of fiscal {year}?", [fact(c, "current_debt", year), fact(c, "long_term_debt", year),
                        fact(c, "total_equity", year)], "(f0 + f1) / f2", "ratio"))  # fmt: skip
    options.append(("roa", "What was {name}'s return on average total assets in fiscal {year}?",
                    [fact(c, "net_income", year), fact(c, "total_assets", year), fact(c, "total_assets", year - 1, report=year)],
                    "f0 / ((f1 + f2) / 2) * 100", "percent"))  # fmt: skip
    options.append(("dso", "What were {short}'s days sales outstanding in fiscal {year}, using year-end accounts receivable "
                    "and a 365-day year?", [fact(c, "receivables", year), fact(c, "revenue", year)], "f0 / f1 * 365", "days"))  # fmt: skip
    if y["inventory"] > 0 and p["inventory"] > 0:
        note = " Use cost of revenue as originally reported." if originally(c, year, {"cost_of_revenue"}) else ""
        options.append(("inventory-turnover", "What was {short}'s inventory turnover in fiscal {year} (cost of revenue divided by "
                        "average inventories)?" + note,
                        [fact(c, "cost_of_revenue", year), fact(c, "inventory", year), fact(c, "inventory", year - 1, report=year)],
                        "f0 / ((f1 + f2) / 2)", "ratio"))  # fmt: skip
    if y["interest_expense"] > 0:
        options.append(("interest-coverage", "What was {name}'s interest coverage ratio (operating income divided by interest "
                        "expense) in fiscal {year}?", [fact(c, "operating_income", year), fact(c, "interest_expense", year)],
                        "f0 / f1", "ratio"))  # fmt: skip
    options.append(("free-cash-flow", "What was {short}'s free cash flow (operating cash flow minus capital expenditures) in "
                    "fiscal {year}?", [fact(c, "cfo", year), fact(c, "capex", year)], "f0 - f1", "money"))  # fmt: skip
    for slug, text, facts, program, kind in rng.sample(options, 2):
        yield make(c, f"fy{year}-{slug}", "ratio", "medium", text.format(**w), facts, program, kind)


def over_years(c: Company, year: int, rng: random.Random) -> Iterator[Question]:
    label, item = rng.choice((("operating margin", "operating_income"), ("net profit margin", "net_income")))
    text = (f"By how many percentage points did {c.short_name}'s {label} change from fiscal {year - 1} to fiscal {year}? "
            "(A decline is negative.)")  # fmt: skip
    facts = [
        fact(c, item, year),
        fact(c, "revenue", year),
        fact(c, item, year - 1, report=year),
        fact(c, "revenue", year - 1, report=year),
    ]
    yield make(
        c, f"fy{year}-{item}-margin-change", "comparison", "medium", text, facts, "(f0 / f1 - f2 / f3) * 100", "points"
    )


def footnote(c: Company, year: int, rng: random.Random) -> Iterator[Question]:
    y, w = c.years[year], words(c, year)
    options = []
    when = str(year + rng.randint(1, 4))
    options.append((f"debt-due-{when}", "footnote", "medium", f"According to the debt footnote in {{name}}'s fiscal {{year}} annual "
                    f"report, how much debt principal is scheduled to mature in fiscal {when}?",
                    [Fact(c.id, year, year, f"maturity:{when}", "notes")], "f0", "money"))  # fmt: skip
    options.append(("non-us-revenue-share", "footnote", "hard", "What percentage of {short}'s fiscal {year} revenue came from "
                    "customers outside the United States?", [Fact(c.id, year, year, "geo:United States", "notes"),
                    fact(c, "revenue", year)], "(f1 - f0) / f1 * 100", "percent"))  # fmt: skip
    region = rng.choice(("Europe", "Asia Pacific"))
    options.append((f"revenue-{region.lower().replace(' ', '-')}", "footnote", "medium", f"How much revenue did {{short}} "
                    f"generate in {region} in fiscal {{year}}?", [Fact(c.id, year, year, f"geo:{region}", "notes")], "f0", "money"))  # fmt: skip
    if y["pretax_income"] > 0:
        # not the effective tax rate: the universe taxes at one of four rates, so a guess of 21% paid 39% of them
        options.append(("pretax-margin", "ratio", "medium", "What was {name}'s pretax margin (income before income taxes "
                        "divided by total revenue) for fiscal {year}?",
                        [fact(c, "pretax_income", year), fact(c, "revenue", year)], "f0 / f1 * 100", "percent"))  # fmt: skip
    if y.dps > 0:
        options.append(("dps", "footnote", "easy", "What dividends per share did {short} pay in fiscal {year}?",
                        [fact(c, "dps", year)], "f0", "pershare"))  # fmt: skip
    segment = rng.choice(list(y.segments))
    options.append((f"segment-margin-{segment.lower().replace(' ', '-')}", "footnote", "hard", f"What was the operating margin "
                    f"of {{short}}'s {segment} segment in fiscal {{year}}?", [Fact(c.id, year, year, f"segment:{segment}:operating_income",
                    "mdna"), Fact(c.id, year, year, f"segment:{segment}:revenue", "mdna")], "f0 / f1 * 100", "percent"))  # fmt: skip
    for slug, category, difficulty, text, facts, program, kind in rng.sample(options, 2):
        yield make(c, f"fy{year}-{slug}", category, difficulty, text.format(**w), facts, program, kind)
    if c.recast and c.recast[0] == year:
        prev = year - 1
        yield make(c, f"fy{year}-restatement-amount", "footnote", "medium",
                   f"In its fiscal {year} annual report {c.name} restated its fiscal {prev} income statement. By how much did "
                   f"the restatement increase fiscal {prev} cost of revenue?", [Fact(c.id, year, prev, "recast", "notes")], "f0", "money")  # fmt: skip
        yield make(c, f"fy{prev}-gross-margin-restated", "footnote", "hard",
                   f"What was {c.short_name}'s fiscal {prev} gross margin as restated in its fiscal {year} annual report?",
                   [fact(c, "gross_profit", prev, report=year), fact(c, "revenue", prev, report=year)], "f0 / f1 * 100", "percent")  # fmt: skip
        if prev in c.reported:
            yield make(c, f"fy{prev}-gross-margin-change-from-restatement", "footnote", "hard",
                       f"By how many percentage points did {c.short_name}'s restatement change its fiscal {prev} gross margin, "
                       f"compared with the figure originally reported in its fiscal {prev} annual report? (A decline is negative.)",
                       [fact(c, "gross_profit", prev, report=year), fact(c, "revenue", prev, report=year),
                        fact(c, "gross_profit", prev), fact(c, "revenue", prev)], "(f0 / f1 - f2 / f3) * 100", "points")  # fmt: skip


def versus(a: Company, b: Company, year: int, rng: random.Random) -> Iterator[Question]:
    """Two companies of one split compared in one fiscal year (their units may differ)."""
    sa, sb = a.scale, b.scale
    item, label = rng.choice((("net_income", "net profit margin"), ("operating_income", "operating margin")))
    facts = [fact(a, item, year), fact(a, "revenue", year), fact(b, item, year), fact(b, "revenue", year)]
    # Asked as the size of the gap, not "which of the two" or "yes or no": a guess pays nothing.
    yield make(a, f"fy{year}-{item}-margin-gap-to-{b.id}", "comparison", "hard",
               f"By how many percentage points did {a.name}'s {label} in fiscal {year} exceed {b.name}'s? "
               "(Negative if it was lower.)", facts, "(f0 / f1 - f2 / f3) * 100", "points")  # fmt: skip
    item = rng.choice(("revenue", "total_assets", "cfo"))
    facts = [fact(a, item, year), fact(b, item, year)]
    yield make(a, f"fy{year}-{item}-excess-over-{b.id}", "comparison", "medium",
               f"By how much did {a.short_name}'s {ITEMS[item][0]} for fiscal {year} exceed {b.short_name}'s? "
               "(Negative if it was smaller.)", facts, f"(f0 * {sa:g} - f1 * {sb:g}) / {sa:g}", "money")  # fmt: skip
    big, small = (a, b) if a.years[year]["revenue"] * sa >= b.years[year]["revenue"] * sb else (b, a)
    if small.years[year]["revenue"] > 0:  # the larger over the smaller, so two decimals are precise enough
        yield make(a, f"fy{year}-revenue-ratio-to-{b.id}", "comparison", "hard",
                   f"{big.short_name}'s fiscal {year} revenue was how many times {small.short_name}'s fiscal {year} revenue?",
                   [fact(big, "revenue", year), fact(small, "revenue", year)], f"(f0 * {big.scale:g}) / (f1 * {small.scale:g})", "ratio")  # fmt: skip


def company_questions(c: Company) -> Iterator[Question]:
    for year in c.reported:
        rng = random.Random(f"questions:{c.id}:{year}")
        yield from extraction(c, year, rng)
        yield from growth(c, year, rng)
        yield from ratio(c, year, rng)
        yield from over_years(c, year, rng)
        yield from footnote(c, year, rng)


def all_questions() -> list[Question]:
    """Every question of the universe; cross-company ones only pair companies of the same split."""
    companies = universe()
    questions = [q for c in companies for q in company_questions(c)]
    for a in companies:
        rng = random.Random(f"versus:{a.id}")
        peers = [b for b in companies if b.id != a.id and b.split == a.split]
        for year in a.reported[-2:]:
            candidates = [b for b in peers if year in b.reported]
            if candidates:
                questions.extend(versus(a, rng.choice(candidates), year, rng))
    seen, unique = set(), []
    for q in questions:
        if q.id not in seen:
            seen.add(q.id)
            unique.append(q)
    return unique
