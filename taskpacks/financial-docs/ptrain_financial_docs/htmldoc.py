"""A `Report` as an HTML filing, and an HTML filing read back into pages of text and tables.

The reader uses nothing but the standard library's `html.parser`: each `<div class="page">` is a
page; headings and paragraphs become paragraphs of text; each `<table>` becomes structured rows
(and aligned lines in the page text, so search finds the figures in it).
"""

from __future__ import annotations

from html import escape
from html.parser import HTMLParser

from ptrain_financial_docs.report import Report, Table

STYLE = (
    "body{font-family:Georgia,serif;max-width:56em;margin:auto}.page{border-bottom:1px dashed #999;padding:1em 0}"
    "table{border-collapse:collapse;margin:1em 0}td,th{padding:2px 10px}td:not(:first-child){text-align:right}"
    "tr.total td{font-weight:bold;border-top:1px solid #000}caption{font-weight:bold}.unit{font-weight:normal}"
)


def table_html(table: Table) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in table.header)
    body = []
    for i, row in enumerate(table.rows):
        cls = ' class="total"' if i in table.totals else ""
        body.append(f"<tr{cls}>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>")
    return (
        f'<table><caption>{escape(table.title)}<br><span class="unit">{escape(table.unit)}</span></caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def render_html(report: Report) -> str:
    parts = [f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{escape(report.title)}</title>']
    parts.append(f"<style>{STYLE}</style></head><body>")
    for number, page in enumerate(report.pages, 1):
        parts.append(f'<div class="page" id="page-{number}">')
        for kind, content in page:
            parts.append(table_html(content) if kind == "table" else f"<{kind}>{escape(content)}</{kind}>")
        parts.append(f'<p class="page-number">{escape(report.company.name)} | Page {number}</p></div>')
    parts.append("</body></html>")
    return "\n".join(parts)


def table_text(table: dict) -> str:
    """A table as aligned lines: title, unit, header, rows."""
    rows = [table["header"], *table["rows"]]
    widths = [max(len(row[i]) if i < len(row) else 0 for row in rows) for i in range(len(rows[0]))]
    lines = [table["title"], table["unit"]]
    for row in rows:
        cells = [row[0].ljust(widths[0])] + [cell.rjust(w) for cell, w in zip(row[1:], widths[1:], strict=False)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


class PageReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pages: list[dict] = []
        self.blocks: list[str] = []
        self.tables: list[dict] = []
        self.text: list[str] | None = None  # the paragraph or cell being read
        self.table: dict | None = None
        self.row: list[str] | None = None
        self.in_unit = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "div" and attrs.get("class") == "page":
            self.blocks, self.tables = [], []
        elif tag in ("h1", "h2", "p") and attrs.get("class") != "page-number":
            self.text = []
        elif tag == "table":
            self.table = {"title": "", "unit": "", "header": [], "rows": []}
        elif tag == "caption":
            self.text = []
        elif tag == "span" and attrs.get("class") == "unit":
            self.table["title"] = "".join(self.text).strip()
            self.text, self.in_unit = [], True
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.text = []

    def handle_endtag(self, tag):
        if tag in ("h1", "h2", "p") and self.text is not None and self.table is None:
            self.blocks.append(" ".join("".join(self.text).split()))
            self.text = None
        elif tag == "caption":
            self.table["unit" if self.in_unit else "title"] = "".join(self.text).strip()
            self.text, self.in_unit = None, False
        elif tag in ("td", "th") and self.row is not None:
            self.row.append("".join(self.text).strip())
            self.text = None
        elif tag == "tr" and self.table is not None:
            key = "rows" if self.table["header"] else "header"
            if key == "header":
                self.table["header"] = self.row
            else:
                self.table["rows"].append(self.row)
            self.row = None
        elif tag == "table":
            self.tables.append(self.table)
            self.blocks.append(table_text(self.table))
            self.table = None
        elif tag == "div" and (self.blocks or self.tables):
            self.pages.append({"text": "\n\n".join(self.blocks), "tables": self.tables})
            self.blocks, self.tables = [], []

    def handle_data(self, data):
        if self.text is not None:
            self.text.append(data)


def read_html(source: str) -> list[dict]:
    """Pages of an HTML filing: [{"text": ..., "tables": [{"title", "unit", "header", "rows"}]}]."""
    reader = PageReader()
    reader.feed(source)
    reader.close()
    return reader.pages
