"""One company's annual report for one fiscal year, as pages of headings, paragraphs and tables.

The content reads the way a 10-K does: a cover and business section (with the head count),
management's discussion with the year's numbers in prose and a segment table, the three primary
statements ("in millions, except per-share amounts", negatives in parentheses, the prior year
"As Restated" where a reclassification happened), and notes (basis of presentation and any
restatement, revenue by geography, debt with its maturities, income taxes, equity). `html.py` and
`pdf.py` render the same `Report`, so a figure is on the same logical page in either format.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptrain_financial_docs.universe import Company, as_reported, debt_note

SECTIONS = ("business", "mdna", "income", "balance", "cashflow", "notes", "notes2")  # one logical page each


@dataclass(frozen=True)
class Table:
    title: str
    unit: str  # e.g. "(in millions, except per-share amounts)"
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]  # first cell the label; "" rows are section captions
    totals: frozenset[int] = frozenset()  # rows printed bold with a rule


@dataclass(frozen=True)
class Report:
    doc_id: str  # e.g. "acme-10k-2024"
    company: Company
    year: int
    pages: tuple[tuple[tuple[str, object], ...], ...]  # per page: ("h1" | "h2" | "p", text) or ("table", Table)

    @property
    def title(self) -> str:
        return f"{self.company.name} Annual Report on Form 10-K for fiscal {self.year}"


def doc_id(company: Company, year: int) -> str:
    return f"{company.id}-10k-{year}"


def fmt(value: int | float, dollar: bool = False, decimals: int = 0) -> str:
    """10-K style: thousands separators, negatives in parentheses, an optional dollar sign."""
    body = f"{abs(value):,.{decimals}f}"
    sign = "$" if dollar else ""
    return f"{sign}({body})" if value < 0 else f"{sign}{body}"


def money(company: Company, value: int) -> str:
    """An amount in prose: "$4,512 million", or for thousands filers "$845.2 million" as MD&A writes it."""
    if company.unit == "millions":
        return f"${value:,} million" if value >= 0 else f"$({-value:,}) million"
    return f"${value / 1000:,.1f} million" if value >= 0 else f"$({-value / 1000:,.1f}) million"


def change(new: float, old: float) -> str:
    if old == 0:
        return "compared with none"
    pct = (new - old) / abs(old) * 100
    return f"an increase of {pct:.1f}%" if pct >= 0 else f"a decrease of {-pct:.1f}%"


def statement(title: str, unit: str, header, lines, cur, prev) -> Table:
    rows, totals = [], set()
    for label, key, style in lines:
        if key is None:
            rows.append((label, "", ""))
            continue
        dollar = all(not cells[1] for _, *cells in rows) or "total" in style  # the first figures, and totals
        if "eps" in style:
            rows.append((label, fmt(cur[key], True, 2), fmt(prev[key], True, 2)))
        else:
            rows.append((label, fmt(cur[key], dollar), fmt(prev[key], dollar)))
        if "total" in style:
            totals.add(len(rows) - 1)
    return Table(title, unit, header, tuple(rows), frozenset(totals))


INCOME = (
    ("Revenue", "revenue", ""), ("Cost of revenue", "cost_of_revenue", ""), ("Gross profit", "gross_profit", "total"),
    ("Research and development", "research_development", "rnd"), ("Selling, general and administrative", "sga", ""),
    ("Operating income", "operating_income", "total"), ("Interest expense", "interest_expense", ""),
    ("Other income (expense), net", "other_income", ""), ("Income before income taxes", "pretax_income", ""),
    ("Provision for (benefit from) income taxes", "income_tax", ""), ("Net income (loss)", "net_income", "total"),
    ("Diluted earnings (loss) per share", "eps", "eps"), ("Diluted weighted-average shares", "diluted_shares", ""),
)  # fmt: skip
BALANCE = (
    ("Current assets:", None, ""), ("Cash and cash equivalents", "cash", ""), ("Accounts receivable, net", "receivables", ""),
    ("Inventories", "inventory", "inv"), ("Prepaid expenses and other current assets", "prepaid", ""),
    ("Total current assets", "current_assets", "total"), ("Property and equipment, net", "ppe", ""),
    ("Goodwill", "goodwill", ""), ("Other long-term assets", "other_assets", ""), ("Total assets", "total_assets", "total"),
    ("Current liabilities:", None, ""), ("Accounts payable", "payables", ""), ("Accrued liabilities", "accrued", ""),
    ("Current portion of long-term debt", "current_debt", ""), ("Total current liabilities", "current_liabilities", "total"),
    ("Long-term debt, net of current portion", "long_term_debt", ""), ("Other long-term liabilities", "other_liabilities", ""),
    ("Total liabilities", "total_liabilities", "total"), ("Stockholders' equity:", None, ""),
    ("Common stock and additional paid-in capital", "paid_in_capital", ""),
    ("Retained earnings (accumulated deficit)", "retained_earnings", ""),
    ("Accumulated other comprehensive income (loss)", "aoci", ""), ("Total stockholders' equity", "total_equity", "total"),
    ("Total liabilities and stockholders' equity", "total_liabilities_equity", "total"),
)  # fmt: skip
CASHFLOW = (
    ("Operating activities:", None, ""), ("Net income (loss)", "net_income", ""), ("Depreciation and amortization", "depreciation", ""),
    ("Stock-based compensation", "stock_comp", ""), ("Accounts receivable", "change_receivables", ""),
    ("Inventories", "change_inventory", "inv"), ("Prepaid expenses and other current assets", "change_prepaid", ""),
    ("Other long-term assets", "change_other_assets", ""), ("Accounts payable", "change_payables", ""),
    ("Accrued liabilities", "change_accrued", ""), ("Other long-term liabilities", "change_other_liabilities", ""),
    ("Net cash provided by operating activities", "cfo", "total"), ("Investing activities:", None, ""),
    ("Purchases of property and equipment", "capex", ""), ("Acquisitions, net of cash acquired", "acquisitions", ""),
    ("Net cash used in investing activities", "cfi", "total"), ("Financing activities:", None, ""),
    ("Proceeds from issuance of debt", "debt_issued", ""), ("Repayments of debt", "debt_repaid", ""),
    ("Dividends paid", "dividends", ""), ("Repurchases of common stock", "buybacks", ""),
    ("Net cash provided by (used in) financing activities", "cff", "total"),
    ("Effect of exchange rate changes on cash", "fx_effect", ""), ("Net change in cash and cash equivalents", "net_change_cash", ""),
    ("Cash and cash equivalents, beginning of year", "cash_begin", ""), ("Cash and cash equivalents, end of year", "cash_end", "total"),
)  # fmt: skip


def build_report(company: Company, year: int) -> Report:
    c, y, p = company, company.years[year], company.years[year - 1]
    cur, prev = as_reported(c, year, year), as_reported(c, year, year - 1)
    cur, prev = {**cur, "eps": y.eps}, {**prev, "eps": p.eps}
    restated = bool(c.recast and c.recast[0] == year)
    header = ("", str(year), f"{year - 1} (As Restated)" if restated else str(year - 1))
    unit = f"(in {c.unit}, except per-share amounts)"
    plain_unit = f"(in {c.unit})"
    fy_end = f"{c.year_end}, {year}"
    uw = c.unit.removesuffix("s")  # "$3 million"
    has_rnd, has_inv = y["research_development"] > 0, y["inventory"] > 0 or p["inventory"] > 0
    keep = lambda lines: tuple(row for row in lines if (has_rnd or row[2] != "rnd") and (has_inv or row[2] != "inv"))  # noqa: E731
    segments = ", ".join(y.segments)

    business = (
        ("h1", f"{c.name}"),
        ("p", f"ANNUAL REPORT ON FORM 10-K for the fiscal year ended {fy_end}. Ticker symbol: {c.ticker}. "
              f"Headquarters: {c.hq}."),
        ("h2", "Item 1. Business"),
        ("p", f"{c.short_name} is a {c.industry} company. We report our results in {len(y.segments)} segments: {segments}. "
              f"Our fiscal year ends on {c.year_end}; references to fiscal {year} are to the year ended {fy_end}."),
        ("p", f"Human capital. As of {fy_end}, we had approximately {y.employees:,} full-time employees, "
              f"compared with approximately {p.employees:,} a year earlier."),
    )  # fmt: skip
    gm, gm_prev = cur["gross_profit"] / cur["revenue"] * 100, prev["gross_profit"] / prev["revenue"] * 100
    op_margin = cur["operating_income"] / cur["revenue"] * 100
    returned = []
    if cur["buybacks"]:
        returned.append(f"{money(c, -cur['buybacks'])} through share repurchases")
    if cur["dividends"]:
        returned.append(f"{money(c, -cur['dividends'])} in dividends (${y.dps:.2f} per share)")
    seg_rows = tuple(
        (name, fmt(rev, i == 0), fmt(p.segments[name][0], i == 0), fmt(op, i == 0), fmt(p.segments[name][1], i == 0))
        for i, (name, (rev, op)) in enumerate(y.segments.items())
    ) + (("Total", fmt(cur["revenue"], True), fmt(prev["revenue"], True), fmt(cur["operating_income"], True),
          fmt(prev["operating_income"], True)),)  # fmt: skip
    mdna = (
        ("h2", "Item 7. Management's Discussion and Analysis of Financial Condition and Results of Operations"),
        ("p", f"Revenue for fiscal {year} was {money(c, cur['revenue'])}, {change(cur['revenue'], prev['revenue'])} "
              f"compared with {money(c, prev['revenue'])} in fiscal {year - 1}."),
        ("p", f"Gross margin was {gm:.1f}% of revenue, compared with {gm_prev:.1f}% in fiscal {year - 1}. "
              f"Operating income was {money(c, cur['operating_income'])} ({op_margin:.1f}% of revenue), compared with "
              f"{money(c, prev['operating_income'])} in the prior year."),
        ("p", f"Net income (loss) was {money(c, cur['net_income'])}, or ${y.eps:,.2f} per diluted share, compared with "
              f"{money(c, prev['net_income'])}, or ${p.eps:,.2f} per diluted share, in fiscal {year - 1}."),
        ("p", f"Liquidity. Net cash provided by operating activities was {money(c, cur['cfo'])} and capital expenditures "
              f"were {money(c, -cur['capex'])}. "
              + (f"We returned {' and '.join(returned)} to shareholders." if returned else "We did not return capital to shareholders this year.")),
        ("table", Table("Segment results", plain_unit, ("Segment", f"Revenue {year}", f"Revenue {year - 1}",
                        f"Operating income {year}", f"Operating income {year - 1}"), seg_rows, frozenset({len(seg_rows) - 1}))),
    )  # fmt: skip
    income = (
        ("h2", "Item 8. Financial Statements and Supplementary Data"),
        ("table", statement("Consolidated Statements of Operations", unit, header, keep(INCOME), cur, prev)),
    )
    plain = (header[0], header[1], str(year - 1))  # the restatement moved costs within the income statement only
    balance = (("table", statement("Consolidated Balance Sheets", plain_unit, plain, keep(BALANCE), cur, prev)),)
    cashflow = (
        ("table", statement("Consolidated Statements of Cash Flows", plain_unit, plain, keep(CASHFLOW), cur, prev)),
    )

    basis = (
        f"The consolidated financial statements include the accounts of {c.name} and its subsidiaries. Amounts are in "
        f"{c.unit} of U.S. dollars unless otherwise stated."
    )
    notes = [("h2", "Notes to Consolidated Financial Statements"), ("p", f"Note 1. Basis of Presentation. {basis}")]
    if restated:
        amount = c.recast[1]
        notes.append(("p", (
            f"Restatement of prior-year presentation. Beginning in fiscal {year}, we classify certain fulfillment and "
            f"distribution costs as cost of revenue; they were previously reported in selling, general and administrative "
            f"expenses. Prior-year amounts have been restated to conform to the current-year presentation: cost of revenue "
            f"for fiscal {year - 1} increased by {fmt(amount, True)} {uw} and selling, general and administrative expenses "
            f"decreased by the same amount. The reclassification had no effect on operating income, net income or cash flows."
        )))  # fmt: skip
    geo_rows = tuple(
        (region, fmt(v, i == 0), fmt(p.geography[region], i == 0)) for i, (region, v) in enumerate(y.geography.items())
    )
    geo_rows += (("Total revenue", fmt(cur["revenue"], True), fmt(prev["revenue"], True)),)
    notes += [
        ("p", "Note 2. Revenue by Geography. Revenue is attributed to regions based on the location of the customer."),
        ("table", Table("Revenue by geographic region", plain_unit, ("Region", str(year), str(year - 1)), geo_rows,
                        frozenset({len(geo_rows) - 1}))),
    ]  # fmt: skip
    debt = debt_note(c, year)
    debt_rows = tuple((name, fmt(v, i == 0)) for i, (name, v) in enumerate(debt.instruments))
    debt_rows += (("Total debt", fmt(sum(v for _, v in debt.instruments), True)),
                  ("Less: current portion", fmt(-cur["current_debt"])),
                  ("Long-term debt, net of current portion", fmt(cur["long_term_debt"], True)))  # fmt: skip
    maturity_rows = tuple((when, fmt(v, i == 0)) for i, (when, v) in enumerate(debt.maturities))
    maturity_rows += (("Total", fmt(sum(v for _, v in debt.maturities), True)),)
    notes += [
        ("p", f"Note 3. Debt. Our debt as of {fy_end} consisted of the following:"),
        ("table", Table("Debt", plain_unit, ("Instrument", str(year)), debt_rows, frozenset({len(debt_rows) - 3, len(debt_rows) - 1}))),
        ("p", "Future principal payments of debt by fiscal year are as follows:"),
        ("table", Table("Scheduled debt maturities", plain_unit, ("Fiscal year", "Principal"), maturity_rows,
                        frozenset({len(maturity_rows) - 1}))),
    ]  # fmt: skip
    pretax, tax = cur["pretax_income"], cur["income_tax"]
    etr = f"{tax / pretax * 100:.1f}%" if pretax else "not meaningful"
    payout = -cur["dividends"]
    notes2 = (
        ("p", f"Note 4. Income Taxes. The provision for income taxes was {fmt(tax, True)} {uw} on income before "
              f"income taxes of {fmt(pretax, True)} {uw}, an effective tax rate of {etr}. The effective rate differs "
              f"from the U.S. federal statutory rate of 21% mainly because of state taxes and foreign earnings."),
        ("p", f"Note 5. Stockholders' Equity. During fiscal {year} we repurchased common stock for {fmt(-cur['buybacks'], True)} "
              f"{uw}. " + (f"We declared and paid dividends of ${y.dps:.2f} per share, {fmt(payout, True)} {uw} in total."
                               if payout else "We did not pay dividends.")),
        ("p", f"Note 6. Stock-Based Compensation. Stock-based compensation expense was {fmt(cur['stock_comp'], True)} "
              f"{uw} in fiscal {year} and {fmt(prev['stock_comp'], True)} {uw} in fiscal {year - 1}."),
    )  # fmt: skip
    return Report(doc_id(c, year), c, year, (business, mdna, income, balance, cashflow, tuple(notes), notes2))


def section_page(section: str) -> int:
    """The logical page (1-based) that holds a section in every report."""
    return SECTIONS.index(section) + 1
