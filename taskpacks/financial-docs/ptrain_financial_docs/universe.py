"""A deterministic universe of companies and their financial statements, balanced to the unit.

Each company gets 3 to 5 fiscal years of annual reports (plus the prior year they compare
against). All amounts are integers in the company's reporting unit (millions, or thousands for
smaller filers), so the accounting identities hold exactly:
- total assets = total liabilities + stockholders' equity, every year;
- retained earnings(t) = retained earnings(t-1) + net income(t) - dividends(t);
- cash(t) = cash(t-1) + operating + investing + financing cash flows + the exchange-rate effect,
  with operating cash flow built from net income and the changes in working capital (indirect
  method), so the balance sheet and the cash-flow statement agree by construction.

Some companies reclassify costs between cost of revenue and SG&A in one year; that year's report
shows the prior year "as recast" (gross profit changes, operating income does not), which is what
`as_reported` returns. Everything is a pure function of `seed`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache

from ptrain.taskpack import split_of

SEED = 20240
N_COMPANIES = 40
FIRST_YEAR = 2021  # earliest fiscal year with a report; reports end no later than LAST_YEAR
LAST_YEAR = 2025

PREFIXES = (
    "Northwind", "Bluegate", "Cedar Ridge", "Halcyon", "Ironbark", "Lumen", "Meridian", "Oakmont", "Pinecrest",
    "Quarry Hill", "Redwood", "Silverline", "Tidewater", "Vantage", "Westbrook", "Zephyr", "Arcadia", "Brightwater",
    "Corvid", "Driftwood", "Evergreen", "Foxhollow", "Granite Peak", "Harbor Point", "Kestrel", "Larkspur", "Maplestone",
    "Nimbus", "Orion", "Palisade", "Riverton", "Summit Lake", "Talon", "Umber", "Willowmere", "Yarrow", "Copperleaf",
    "Stonebridge", "Amberly", "Glenmore",
)  # fmt: skip
SUFFIXES = ("Inc.", "Corporation", "Holdings, Inc.", "Co.", "Group, Inc.")


@dataclass(frozen=True)
class Industry:
    name: str
    nouns: tuple[str, ...]
    segments: tuple[str, ...]
    gross_margin: tuple[float, float]
    rnd: float  # R&D as a share of revenue (0: none reported)
    sga: float
    growth: tuple[float, float]  # mean yearly growth range
    dso: tuple[int, int]
    dio: tuple[int, int]  # inventory days (0: no inventory)
    capex: float
    leverage: float  # debt / revenue at the start


INDUSTRIES = (
    Industry("software", ("Software", "Systems", "Analytics", "Cloud"), ("Subscription", "Professional Services", "Licenses"),
             (0.68, 0.82), 0.18, 0.30, (0.08, 0.22), (45, 75), (0, 0), 0.04, 0.25),
    Industry("retail", ("Stores", "Retail", "Outfitters", "Markets"), ("Stores", "E-commerce", "Wholesale"),
             (0.28, 0.40), 0.0, 0.20, (0.01, 0.08), (3, 12), (45, 90), 0.04, 0.20),
    Industry("industrials", ("Industries", "Manufacturing", "Machinery", "Components"), ("Equipment", "Aftermarket Parts", "Services"),
             (0.25, 0.38), 0.03, 0.12, (0.00, 0.07), (50, 70), (60, 110), 0.05, 0.35),
    Industry("energy", ("Energy", "Power", "Resources", "Renewables"), ("Generation", "Transmission", "Retail Energy"),
             (0.22, 0.35), 0.0, 0.06, (-0.03, 0.08), (30, 50), (10, 25), 0.14, 0.60),
    Industry("healthcare", ("Health", "Medical", "Therapeutics", "Diagnostics"), ("Devices", "Diagnostics", "Pharmaceuticals"),
             (0.55, 0.70), 0.12, 0.26, (0.03, 0.12), (50, 80), (90, 150), 0.05, 0.30),
    Industry("consumer", ("Brands", "Foods", "Beverages", "Home"), ("North America Foods", "International", "Beverages"),
             (0.32, 0.45), 0.01, 0.20, (0.01, 0.06), (25, 40), (35, 60), 0.04, 0.40),
    Industry("logistics", ("Logistics", "Freight", "Transport"), ("Truckload", "Intermodal", "Brokerage"),
             (0.15, 0.24), 0.0, 0.07, (0.00, 0.09), (35, 50), (0, 0), 0.08, 0.45),
)  # fmt: skip

BS_ITEMS = (
    "cash", "receivables", "inventory", "prepaid", "current_assets", "ppe", "goodwill", "other_assets", "total_assets",
    "payables", "accrued", "current_debt", "current_liabilities", "long_term_debt", "other_liabilities",
    "total_liabilities", "paid_in_capital", "retained_earnings", "aoci", "total_equity", "total_liabilities_equity",
)  # fmt: skip


@dataclass(frozen=True)
class Year:
    """One fiscal year's statements, integers in the company's unit (shares too), EPS/DPS in dollars."""

    year: int
    items: Mapping[str, int]  # income statement, balance sheet (year end) and cash-flow lines
    segments: Mapping[str, tuple[int, int]]  # segment -> (revenue, operating income)
    geography: Mapping[str, int]  # region -> revenue
    eps: float
    dps: float
    employees: int
    tax_rate: float  # statutory-ish rate the year's tax was computed with

    def __getitem__(self, key: str) -> int:
        return self.items[key]


@dataclass(frozen=True)
class Company:
    id: str  # the ticker in lower case; splits hash it
    name: str
    ticker: str
    industry: str
    unit: str  # "millions" or "thousands"
    year_end: str  # "December 31", ...
    hq: str
    years: Mapping[int, Year]  # the prior year and every reported year
    reported: tuple[int, ...]  # fiscal years with an annual report
    recast: tuple[int, int] | None = (
        None  # (report year, amount moved from SG&A into cost of revenue for the prior year)
    )
    debt_rates: tuple[float, ...] = field(default_factory=tuple)

    @property
    def split(self) -> str:
        return split_of(self.id)

    @property
    def scale(self) -> float:
        return 1e6 if self.unit == "millions" else 1e3

    @property
    def short_name(self) -> str:
        return self.name.split(",")[0].removesuffix(" Inc.").removesuffix(" Corporation").removesuffix(" Co.")


def as_reported(company: Company, report_year: int, year: int) -> Mapping[str, int]:
    """The figures for `year` as shown in the `report_year` annual report (the prior year may be recast)."""
    items = dict(company.years[year].items)
    if company.recast and company.recast[0] == report_year and year == report_year - 1:
        amount = company.recast[1]
        items["cost_of_revenue"] += amount
        items["sga"] -= amount
        items["gross_profit"] -= amount
    return items


def split_ints(total: int, weights: list[float]) -> list[int]:
    """Integers in proportion to `weights` that add up to `total` exactly."""
    parts = [round(total * w / sum(weights)) for w in weights[:-1]]
    return [*parts, total - sum(parts)]


def simulate(rng: random.Random, ind: Industry, first: int, last: int, revenue0: int) -> dict[int, Year]:
    """Statements for first-1 .. last from an opening balance sheet at the end of first-2."""
    gm = rng.uniform(*ind.gross_margin)
    growth = rng.uniform(*ind.growth)
    dso, dio = rng.randint(*ind.dso), rng.randint(*ind.dio) if ind.dio[1] else 0
    dpo = rng.randint(30, 60)
    tax_rate = rng.choice((0.19, 0.21, 0.23, 0.25))
    payout = rng.choice((0.0, 0.0, 0.2, 0.3, 0.4))
    debt_rate = rng.uniform(0.03, 0.065)
    shares = rng.randint(40, 900) if revenue0 > 5000 else rng.randint(20, 300)
    if revenue0 > 50_000:  # thousands filers: shares in thousands too
        shares *= 100
    n_seg = len(ind.segments) - rng.randint(0, 1)
    seg_w = [rng.uniform(0.5, 2.0) for _ in range(n_seg)]
    geo_w = {"United States": rng.uniform(2, 6), "Europe": rng.uniform(0.5, 2), "Asia Pacific": rng.uniform(0.3, 1.5)}
    rev = revenue0
    debt = round(rev * ind.leverage * rng.uniform(0.5, 1.5))
    bs = {
        "cash": round(rev * rng.uniform(0.08, 0.2)),
        "receivables": round(rev * dso / 365),
        "inventory": round(rev * (1 - gm) * dio / 365),
        "prepaid": round(rev * 0.02),
        "ppe": round(rev * ind.capex * rng.uniform(3, 6)),
        "goodwill": round(rev * rng.uniform(0.05, 0.3)),
        "other_assets": round(rev * rng.uniform(0.02, 0.08)),
        "payables": round(rev * (1 - gm) * dpo / 365),
        "accrued": round(rev * 0.05),
        "debt": debt,
        "other_liabilities": round(rev * rng.uniform(0.02, 0.06)),
        "paid_in_capital": round(rev * rng.uniform(0.2, 0.5)),
        "aoci": -round(rev * rng.uniform(0.0, 0.02)),
    }
    assets = sum(bs[k] for k in ("cash", "receivables", "inventory", "prepaid", "ppe", "goodwill", "other_assets"))
    liabilities = sum(bs[k] for k in ("payables", "accrued", "debt", "other_liabilities"))
    bs["retained_earnings"] = assets - liabilities - bs["paid_in_capital"] - bs["aoci"]
    employees = max(50, round(rev * rng.uniform(1.5, 4.0) * (1 if revenue0 < 50_000 else 0.001)))
    years: dict[int, Year] = {}
    for year in range(first - 1, last + 1):
        g = growth + rng.gauss(0, 0.05)
        rev = max(10, round(rev * (1 + g)))
        shock = rng.random() < 0.1  # a bad year: margins collapse, sometimes into a loss
        this_gm = gm + rng.gauss(0, 0.015) - (rng.uniform(0.05, 0.15) if shock else 0.0)
        cogs = round(rev * (1 - this_gm))
        rnd = round(rev * ind.rnd * rng.uniform(0.85, 1.15))
        sga = round(rev * ind.sga * rng.uniform(0.85, 1.15))
        op = rev - cogs - rnd - sga
        interest = round(bs["debt"] * debt_rate)
        other = round(rev * rng.uniform(-0.004, 0.006))
        pretax = op - interest + other
        tax = round(pretax * tax_rate)
        ni = pretax - tax
        depreciation = round(bs["ppe"] * rng.uniform(0.08, 0.14))
        capex = round(rev * ind.capex * rng.uniform(0.8, 1.2))
        acquisition = round(rev * rng.uniform(0.03, 0.12)) if rng.random() < 0.15 else 0
        sbc = round(rev * rng.uniform(0.005, 0.03))
        new = {
            "receivables": round(rev * (dso + rng.randint(-5, 5)) / 365),
            "inventory": round(cogs * (dio + rng.randint(-5, 5)) / 365) if dio else 0,
            "prepaid": round(rev * rng.uniform(0.015, 0.025)),
            "other_assets": max(0, bs["other_assets"] + round(rev * rng.uniform(-0.005, 0.01))),
            "payables": round(cogs * (dpo + rng.randint(-5, 5)) / 365),
            "accrued": round(rev * rng.uniform(0.04, 0.06)),
            "other_liabilities": max(0, bs["other_liabilities"] + round(rev * rng.uniform(-0.005, 0.008))),
        }
        delta = {k: new[k] - bs[k] for k in new}
        cfo = ni + depreciation + sbc - delta["receivables"] - delta["inventory"] - delta["prepaid"]
        cfo += -delta["other_assets"] + delta["payables"] + delta["accrued"] + delta["other_liabilities"]
        cfi = -capex - acquisition
        dividends = max(0, round(ni * payout))
        repaid = bs["current_debt"] if "current_debt" in bs else round(bs["debt"] * 0.1)
        fx = round(rev * rng.uniform(-0.004, 0.003))
        before_financing = bs["cash"] + cfo + cfi - dividends - repaid + fx
        floor = round(rev * 0.06)
        issued = 0
        if before_financing < floor:
            issued = floor - before_financing + round(rev * rng.uniform(0.02, 0.08))
        elif rng.random() < 0.25:
            issued = round(rev * rng.uniform(0.02, 0.1))
        spare = before_financing + issued - round(rev * 0.15)
        equity = sum(bs[k] for k in ("paid_in_capital", "retained_earnings", "aoci")) + ni - dividends + sbc + fx
        spare = min(spare, equity - round(rev * 0.25))  # buy back stock only while equity stays positive
        buybacks = round(spare * rng.uniform(0.2, 0.6)) if spare > 0 and rng.random() < 0.6 else 0
        cff = issued - repaid - dividends - buybacks
        cash = bs["cash"] + cfo + cfi + cff + fx
        debt = bs["debt"] + issued - repaid
        current_debt = round(debt * rng.uniform(0.05, 0.15))
        bs = {
            **new,
            "cash": cash,
            "ppe": bs["ppe"] + capex - depreciation,
            "goodwill": bs["goodwill"] + acquisition,
            "debt": debt,
            "current_debt": current_debt,
            "paid_in_capital": bs["paid_in_capital"] + sbc - buybacks,
            "retained_earnings": bs["retained_earnings"] + ni - dividends,
            "aoci": bs["aoci"] + fx,
        }
        shares = max(1, round(shares * (1 + rng.uniform(-0.03, 0.01))))
        employees = max(50, round(employees * (1 + g + rng.gauss(0, 0.02))))
        items = {
            "revenue": rev, "cost_of_revenue": cogs, "gross_profit": rev - cogs, "research_development": rnd,
            "sga": sga, "operating_income": op, "interest_expense": interest, "other_income": other,
            "pretax_income": pretax, "income_tax": tax, "net_income": ni, "diluted_shares": shares,
            **{k: bs[k] for k in ("cash", "receivables", "inventory", "prepaid", "ppe", "goodwill", "other_assets")},
            **{k: bs[k] for k in ("payables", "accrued", "current_debt", "other_liabilities", "paid_in_capital")},
            "long_term_debt": debt - current_debt, "retained_earnings": bs["retained_earnings"], "aoci": bs["aoci"],
            "depreciation": depreciation, "stock_comp": sbc, "change_receivables": -delta["receivables"],
            "change_inventory": -delta["inventory"], "change_prepaid": -delta["prepaid"],
            "change_other_assets": -delta["other_assets"], "change_payables": delta["payables"],
            "change_accrued": delta["accrued"], "change_other_liabilities": delta["other_liabilities"],
            "cfo": cfo, "capex": -capex, "acquisitions": -acquisition, "cfi": cfi, "debt_issued": issued,
            "debt_repaid": -repaid, "dividends": -dividends, "buybacks": -buybacks, "cff": cff, "fx_effect": fx,
            "net_change_cash": cfo + cfi + cff + fx, "cash_begin": cash - (cfo + cfi + cff + fx), "cash_end": cash,
        }  # fmt: skip
        items["current_assets"] = sum(items[k] for k in ("cash", "receivables", "inventory", "prepaid"))
        items["total_assets"] = items["current_assets"] + items["ppe"] + items["goodwill"] + items["other_assets"]
        items["current_liabilities"] = items["payables"] + items["accrued"] + items["current_debt"]
        items["total_liabilities"] = items["current_liabilities"] + items["long_term_debt"] + items["other_liabilities"]
        items["total_equity"] = items["paid_in_capital"] + items["retained_earnings"] + items["aoci"]
        items["total_liabilities_equity"] = items["total_liabilities"] + items["total_equity"]
        seg_w = [w * rng.uniform(0.9, 1.12) for w in seg_w]
        seg_rev = split_ints(rev, seg_w)
        seg_op = split_ints(op, [r * rng.uniform(0.7, 1.3) for r in seg_rev])
        geo_w = {k: w * rng.uniform(0.93, 1.08) for k, w in geo_w.items()}
        years[year] = Year(
            year=year,
            items=items,
            segments=dict(zip(ind.segments[:n_seg], zip(seg_rev, seg_op, strict=True), strict=True)),
            geography=dict(zip(geo_w, split_ints(rev, list(geo_w.values())), strict=True)),
            eps=round(ni / shares, 2),
            dps=round(dividends / shares, 2),
            employees=employees,
            tax_rate=tax_rate,
        )
    return years


def make_company(index: int, seed: int, taken: set[str]) -> Company:
    rng = random.Random(f"{seed}:{index}")
    ind = INDUSTRIES[index % len(INDUSTRIES)]
    prefix = PREFIXES[index]
    name = f"{prefix} {rng.choice(ind.nouns)} {rng.choice(SUFFIXES)}"
    letters = "".join(w[0] for w in name.replace(",", "").split()[:-1]).upper()
    ticker = (letters + prefix.replace(" ", "").upper())[:3] if len(letters) < 3 else letters[:4]
    while ticker in taken:
        ticker = ticker[:-1] + chr(ord("A") + rng.randrange(26))
    taken.add(ticker)
    n_years = rng.randint(3, 5)
    last = rng.randint(FIRST_YEAR + n_years - 1, LAST_YEAR)
    first = last - n_years + 1
    small = rng.random() < 0.3
    revenue0 = (
        rng.randint(60_000, 900_000) if small else rng.choice((rng.randint(400, 3000), rng.randint(3000, 40_000)))
    )
    years = simulate(rng, ind, first, last, revenue0)
    recast = None
    if rng.random() < 0.35:
        report_year = rng.randint(first + 1, last)
        prior = years[report_year - 1]
        recast = (report_year, max(1, round(prior["sga"] * rng.uniform(0.04, 0.12))))
    hq = rng.choice(("Austin, Texas", "Columbus, Ohio", "Denver, Colorado", "Charlotte, North Carolina", "Portland, Oregon",
                     "Minneapolis, Minnesota", "Atlanta, Georgia", "Boston, Massachusetts", "Phoenix, Arizona"))  # fmt: skip
    return Company(
        id=ticker.lower(),
        name=name,
        ticker=ticker,
        industry=ind.name,
        unit="thousands" if small else "millions",
        year_end=rng.choice(("December 31", "December 31", "June 30", "September 30")),
        hq=hq,
        years=years,
        reported=tuple(range(first, last + 1)),
        recast=recast,
    )


@cache
def universe(seed: int = SEED, n: int = N_COMPANIES) -> tuple[Company, ...]:
    """The companies, in a fixed order; the same on every machine."""
    taken: set[str] = set()
    return tuple(make_company(i, seed, taken) for i in range(n))


def company(company_id: str, seed: int = SEED) -> Company:
    return next(c for c in universe(seed) if c.id == company_id)


@dataclass(frozen=True)
class DebtNote:
    """The debt footnote of one report: the instruments and the principal due by year."""

    instruments: tuple[tuple[str, int], ...]  # description, principal
    maturities: tuple[tuple[str, int], ...]  # "2025", ..., "Thereafter" -> principal


def debt_note(company: Company, year: int) -> DebtNote:
    """Instruments and maturities that add up to the year-end debt (current portion due next year)."""
    y = company.years[year]
    total, current = y["current_debt"] + y["long_term_debt"], y["current_debt"]
    rng = random.Random(f"debt:{company.id}:{year}")
    n = rng.randint(2, 3)
    kinds = [
        f"{rng.choice((2.75, 3.25, 3.875, 4.5, 5.125, 5.75, 6.25))}% Senior Notes due {year + rng.randint(3, 9)}"
        for _ in range(n - 1)
    ]
    kinds.append(f"Term loan facility due {year + rng.randint(2, 5)} (SOFR + {rng.choice((1.25, 1.5, 1.75))}%)")
    amounts = split_ints(total, [rng.uniform(0.5, 1.5) for _ in kinds]) if total else [0] * len(kinds)
    later = split_ints(total - current, [rng.uniform(0.2, 1.0) for _ in range(5)]) if total - current else [0] * 5
    maturities = [(str(year + 1), current)] + [(str(year + i), later[i - 2]) for i in range(2, 6)]
    maturities.append(("Thereafter", later[4]))
    return DebtNote(tuple(zip(kinds, amounts, strict=True)), tuple(maturities))
