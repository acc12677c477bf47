"""A `Report` as a PDF filing (fpdf2, core fonts), and its text read back page by page with pypdf.

Every logical page of the report starts a new PDF page; a long one may run onto the next, so the
renderer returns where each logical page and each table landed. Page text comes from pypdf's
extraction of the PDF itself (what a pipeline over real filings would get); tables come from the
renderer's own record of what it drew, since recovering table structure from PDF drawing
operators is a different problem from the one these tasks pose. The PDF is deterministic: fixed
creation date and document id, so the same report gives the same bytes on every machine.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime

from fpdf import FPDF
from pypdf import PdfReader

from ptrain_financial_docs.report import Report, Table

EPOCH = datetime(2020, 1, 1, tzinfo=UTC)
LINE_MM = 4.6


def draw_table(pdf: FPDF, table: Table) -> None:
    pdf.set_font("Helvetica", "B", 9.5)
    pdf.cell(0, 6, table.title, new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "I", 8)
    pdf.cell(0, 4.5, table.unit, new_x="LMARGIN", new_y="NEXT")
    n = len(table.header)
    label_w = 82 if n <= 3 else 58
    other_w = min(40.0, (pdf.epw - label_w) / max(1, n - 1))
    pdf.set_font("Helvetica", "B", 8)
    for i, head in enumerate(table.header):
        pdf.cell(label_w if i == 0 else other_w, 5, head, align="L" if i == 0 else "R")
    pdf.ln(5)
    for r, row in enumerate(table.rows):
        pdf.set_font("Helvetica", "B" if r in table.totals else "", 8)
        for i, cell in enumerate(row):
            pdf.cell(label_w if i == 0 else other_w, LINE_MM, cell, align="L" if i == 0 else "R")
        pdf.ln(LINE_MM)
    pdf.ln(2)


def render_pdf(report: Report) -> tuple[bytes, list[int], list[tuple[int, Table]]]:
    """The PDF, the physical page where each logical page starts, and (page, table) for each table drawn."""
    pdf = FPDF(format="letter")
    pdf.set_creation_date(EPOCH)
    pdf.file_id = lambda: f"<{report.doc_id.encode().hex()[:32]:0<32}><{report.doc_id.encode().hex()[:32]:0<32}>"
    pdf.set_title(report.title)
    pdf.set_author(report.company.name)
    pdf.set_auto_page_break(True, margin=15)
    pdf.set_margins(15, 15, 15)
    starts, tables = [], []
    for page in report.pages:
        pdf.add_page()
        starts.append(pdf.page_no())
        for kind, content in page:
            if kind == "table":
                tables.append((pdf.page_no(), content))
                draw_table(pdf, content)
            elif kind in ("h1", "h2"):
                pdf.set_font("Helvetica", "B", 13 if kind == "h1" else 10.5)
                pdf.multi_cell(0, 6, content, new_x="LMARGIN", new_y="NEXT")
                pdf.ln(1)
            else:
                pdf.set_font("Helvetica", "", 9)
                pdf.multi_cell(0, LINE_MM, content, new_x="LMARGIN", new_y="NEXT")
                pdf.ln(2)
    return bytes(pdf.output()), starts, tables


def read_pdf(data: bytes) -> list[str]:
    """The text of each page of a PDF, extracted by pypdf."""
    return [page.extract_text() or "" for page in PdfReader(io.BytesIO(data)).pages]
