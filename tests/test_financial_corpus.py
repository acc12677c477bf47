"""The financial-docs corpus on the host: HTML and PDF filings read back, BM25 search, read and tables."""

from __future__ import annotations

import json

import pytest
from ptrain_financial_docs.corpus import build_corpus, doc_format
from ptrain_financial_docs.htmldoc import read_html, render_html
from ptrain_financial_docs.image import fdocs
from ptrain_financial_docs.pdfdoc import read_pdf, render_pdf
from ptrain_financial_docs.report import build_report, fmt
from ptrain_financial_docs.universe import universe


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory):
    """Every report of three companies, built the way the full corpus is."""
    dest = tmp_path_factory.mktemp("corpus")
    build_corpus(dest, companies=universe()[:3])
    return dest / "filings"


def restated_report():
    c = next(c for c in universe() if c.recast)
    return build_report(c, c.recast[0])


def test_figures_are_formatted_as_in_a_10k():
    assert fmt(4512) == "4,512" and fmt(-1234) == "(1,234)" and fmt(-1234, dollar=True) == "$(1,234)"
    assert fmt(2.5, True, 2) == "$2.50"


def test_an_html_filing_reads_back_into_pages_text_and_structured_tables():
    report = restated_report()
    pages = read_html(render_html(report))
    assert len(pages) == len(report.pages)
    income = pages[2]["tables"][0]
    assert income["title"] == "Consolidated Statements of Operations" and "in " in income["unit"]
    assert income["header"][2].endswith("(As Restated)")
    revenue = report.company.years[report.year]["revenue"]
    assert income["rows"][0] == ["Revenue", fmt(revenue, True), income["rows"][0][2]]
    assert f"{revenue:,}" in pages[2]["text"]
    assert "Restatement of prior-year presentation" in pages[5]["text"]


def test_a_pdf_filing_is_deterministic_and_its_text_extracts_with_the_figures():
    report = restated_report()
    data, starts, tables = render_pdf(report)
    assert data.startswith(b"%PDF") and data == render_pdf(report)[0]
    texts = read_pdf(data)
    assert starts[0] == 1 and len(texts) >= len(report.pages)
    y = report.company.years[report.year]
    page = texts[starts[2] - 1]
    assert "Consolidated Statements of Operations" in page and f"${y['revenue']:,}" in page
    assert fmt(y["net_income"], True) in page
    assert {t.title for _, t in tables} >= {"Consolidated Balance Sheets", "Scheduled debt maturities"}


def test_the_corpus_has_both_formats_an_index_and_a_catalog(small_corpus):
    catalog = json.loads((small_corpus / ".index" / "catalog.json").read_text())
    assert len(catalog) == sum(len(c.reported) for c in universe()[:3])
    assert {d["file"].rsplit(".", 1)[1] for d in catalog} == {"html", "pdf"}
    for d in catalog:
        assert (small_corpus / d["file"]).is_file() and d["file"].endswith(doc_format(d["doc"]))
    assert "| document |" in (small_corpus / "CATALOG.md").read_text()
    assert (small_corpus / ".index" / "bm25.json").is_file()


def test_bm25_ranks_the_document_with_the_rare_query_term_first():
    docs = [
        fdocs.tokenize(t) for t in ("revenue grew in 2024", "revenue and goodwill", "cash flow statement", "revenue")
    ]
    bm25 = fdocs.BM25(docs)
    assert bm25.top(fdocs.tokenize("goodwill revenue"), 2)[0][0] == 1
    assert bm25.idf("goodwill") > bm25.idf("revenue") > 0
    assert bm25.top(["absent"], 3) == []
    again = fdocs.BM25.from_state(json.loads(json.dumps(bm25.state())))
    assert again.top(fdocs.tokenize("cash revenue"), 4) == bm25.top(fdocs.tokenize("cash revenue"), 4)


def test_tokens_drop_stopwords_and_thousands_separators():
    assert fdocs.tokenize("The revenue was $4,512.5 million in 2024") == ["revenue", "4512.5", "million", "2024"]


def test_long_prose_is_chunked_at_paragraph_and_line_boundaries():
    prose = "\n\n".join(f"Paragraph {i} says something about the year." for i in range(40))
    chunks = fdocs.chunk_page(prose, limit=60)
    assert len(chunks) > 3 and all(len(c.split()) <= 60 for c in chunks)
    assert "\n\n".join(chunks) == prose


def test_each_table_row_is_a_passage_under_its_title_unit_and_year_header():
    page = (
        "Item 8. Financial Statements\nConsolidated Balance Sheets\n(in thousands)\n   2024      2023\nCurrent assets:\n"
        "Cash and cash equivalents   $65,499   $39,377\nTotal assets   $356,493   $324,307\n"
        "Debt\n(in millions)\nNote A  1,000\nNote B  2,000\n\nA closing paragraph."
    )
    chunks = fdocs.chunk_page(page)
    assert chunks[0] == "Item 8. Financial Statements"
    assert (
        chunks[1]
        == "Consolidated Balance Sheets\n(in thousands)\n2024  2023\nCash and cash equivalents  $65,499  $39,377"
    )
    assert chunks[2].endswith("\nTotal assets  $356,493  $324,307")
    assert chunks[3:5] == ["Debt\n(in millions)\nNote A  1,000", "Debt\n(in millions)\nNote B  2,000"]  # no year header
    assert chunks[5:] == ["A closing paragraph."] and not any(c.endswith(":") for c in chunks)


@pytest.mark.parametrize(
    ("item", "page"), [("cash and cash equivalents", 4), ("total assets", 4), ("cost of revenue", 3)]
)
def test_search_finds_the_statement_row_a_question_names(small_corpus, monkeypatch, tmp_path, item, page):
    monkeypatch.setenv("FDOCS_CACHE", str(tmp_path))
    for c in universe()[:3]:
        year = c.reported[-1]
        top = fdocs.search(small_corpus, f"{c.short_name} {item} {year}", k=3).split("\n\n[2]")[0]
        assert f"doc={c.id}-10k-{year} page={page}" in top and item in top.lower()


def test_read_and_tables_return_a_page_and_its_parsed_rows(small_corpus):
    c = universe()[0]
    doc = f"{c.id}-10k-{c.reported[0]}"
    assert "Consolidated Balance Sheets" in fdocs.read(small_corpus, doc + ".pdf", 4)
    rows = [json.loads(line) for line in fdocs.tables(small_corpus, doc, 4).splitlines()[1:]]
    total_assets = next(r for r in rows if isinstance(r, list) and r[0] == "Total assets")
    assert total_assets[1] == c.years[c.reported[0]]["total_assets"]
    assert fdocs.number("$(1,234)") == -1234 and fdocs.number("0.16") == 0.16 and fdocs.number("n/a") == "n/a"
    with pytest.raises(LookupError, match="pages 1 to"):
        fdocs.read(small_corpus, doc, 99)
    with pytest.raises(LookupError, match="no document"):
        fdocs.read(small_corpus, "nope-10k-1999", 1)


def test_search_builds_and_caches_its_index_when_none_was_shipped(small_corpus, tmp_path, monkeypatch):
    bare = tmp_path / "filings"
    (bare / ".index").mkdir(parents=True)
    for name in ("pages.jsonl", "catalog.json"):
        (bare / ".index" / name).write_bytes((small_corpus / ".index" / name).read_bytes())
    monkeypatch.setenv("FDOCS_CACHE", str(tmp_path / "cache"))
    first = fdocs.search(bare, "total assets", 2)
    assert list((tmp_path / "cache").glob("bm25-*.json")) and fdocs.search(bare, "total assets", 2) == first


def test_each_section_starts_on_the_page_the_corpus_records_in_both_formats(small_corpus):
    starts = json.loads((small_corpus.parent / "sections.json").read_text())
    titles = {"income": "Consolidated Statements of Operations", "balance": "Consolidated Balance Sheets",
              "cashflow": "Consolidated Statements of Cash Flows", "mdna": "Management's Discussion", "notes": "Note 3. Debt"}  # fmt: skip
    for doc, sections in starts.items():
        for section, title in titles.items():
            assert title in fdocs.read(small_corpus, doc, sections[section]), (doc, section)
