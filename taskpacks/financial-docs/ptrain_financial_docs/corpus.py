"""The corpus: every company's annual reports rendered once, cached on disk, and shipped to sandboxes.

A third of the reports are PDFs (chosen by a hash of the document id), the rest HTML. Building
renders each report, reads it back the way a pipeline over real filings would (HTML with
`html.parser`, PDF with pypdf) and writes, under `filings/`:
- the documents themselves (`<company>-10k-<year>.html|.pdf`) and `CATALOG.md` listing them;
- `.index/pages.jsonl` (each page's extracted text and tables), `.index/catalog.json` and
  `.index/bm25.json` (the search index, built here by the sandbox's own `fdocs.py`);
plus, beside `filings/`, `sections.json`: on which page of each document each section starts
(for gold solutions) and `corpus.tar.gz`, the whole of `filings/` as one archive for `setup`.

The cache lives in `<ptrain home>/financial-docs/<hash of this package's generator sources and
the PDF libraries' versions>/`, is built into a temporary directory and renamed into place, so
concurrent builders never see half a corpus, and changing the generator builds a new one.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import fpdf
import pypdf

from ptrain.paths import home
from ptrain_financial_docs.htmldoc import read_html, render_html
from ptrain_financial_docs.image import fdocs
from ptrain_financial_docs.pdfdoc import read_pdf, render_pdf
from ptrain_financial_docs.report import SECTIONS, build_report
from ptrain_financial_docs.universe import SEED, Company, universe

HERE = Path(__file__).parent
SOURCES = ("universe.py", "report.py", "htmldoc.py", "pdfdoc.py", "corpus.py", "image/fdocs.py")
FILINGS = "filings"  # in the workspace


def corpus_version(seed: int = SEED) -> str:
    h = hashlib.sha256(f"{seed} fpdf2 {fpdf.__version__} pypdf {pypdf.__version__}".encode())
    for name in SOURCES:
        h.update((HERE / name).read_bytes())
    return h.hexdigest()[:12]


def doc_format(doc_id: str) -> str:
    return "pdf" if int(hashlib.sha256(doc_id.encode()).hexdigest()[:8], 16) % 3 == 0 else "html"


def build_document(company: Company, year: int) -> tuple[str, bytes, list[dict], dict[str, int]]:
    """(file name, file bytes, pages [{"text", "tables"}], section -> first page) of one report."""
    report = build_report(company, year)
    if doc_format(report.doc_id) == "html":
        source = render_html(report)
        pages = read_html(source)
        return f"{report.doc_id}.html", source.encode(), pages, {s: i + 1 for i, s in enumerate(SECTIONS)}
    data, starts, drawn = render_pdf(report)
    texts = read_pdf(data)
    pages = [{"text": text, "tables": []} for text in texts]
    for page, table in drawn:
        pages[page - 1]["tables"].append(
            {
                "title": table.title,
                "unit": table.unit,
                "header": list(table.header),
                "rows": [list(r) for r in table.rows],
            }
        )
    return f"{report.doc_id}.pdf", data, pages, dict(zip(SECTIONS, starts, strict=True))


def catalog_markdown(catalog: list[dict]) -> str:
    lines = [
        "# Filings",
        "",
        "Annual reports on Form 10-K. Search them with `search`, read a page with `read`, get a page's tables with `tables`.",
        "",
        "| document | company | ticker | fiscal year | file | pages |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    lines += [
        f"| {d['doc']} | {d['company']} | {d['ticker']} | {d['year']} | {d['file']} | {d['pages']} |" for d in catalog
    ]
    return "\n".join(lines) + "\n"


def build_corpus(dest: Path, seed: int = SEED, companies: Sequence[Company] | None = None) -> None:
    """Render every report of the universe (or of `companies`) into `dest` (see the module docstring)."""
    filings = dest / FILINGS
    (filings / ".index").mkdir(parents=True)
    catalog, sections = [], {}
    with open(filings / ".index" / "pages.jsonl", "w") as index:
        for company in universe(seed) if companies is None else companies:
            for year in company.reported:
                name, data, pages, starts = build_document(company, year)
                doc = name.rsplit(".", 1)[0]
                (filings / name).write_bytes(data)
                for number, page in enumerate(pages, 1):
                    index.write(json.dumps({"doc": doc, "page": number, **page}) + "\n")
                title = f"{company.name} ({company.ticker}) annual report on Form 10-K, fiscal {year}"
                catalog.append({"doc": doc, "company": company.name, "ticker": company.ticker, "year": year,
                                "file": name, "pages": len(pages), "title": title})  # fmt: skip
                sections[doc] = starts
    (filings / ".index" / "catalog.json").write_text(json.dumps(catalog, indent=0))
    fdocs.save_index(filings / ".index" / "bm25.json", *fdocs.build_index(*fdocs.load_pages(filings)))
    (filings / "CATALOG.md").write_text(catalog_markdown(catalog))
    (dest / "sections.json").write_text(json.dumps(sections))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=6) as tar:
        for path in sorted(filings.rglob("*")):
            info = tar.gettarinfo(str(path), arcname=str(path.relative_to(dest)))
            info.uid = info.gid = 1000
            info.uname = info.gname = ""
            info.mtime = 0
            if path.is_file():
                with open(path, "rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
    (dest / "corpus.tar.gz").write_bytes(buf.getvalue())


def cache_root() -> Path:
    return Path(os.environ.get("PTRAIN_FINANCIAL_CACHE_DIR", home() / "financial-docs"))


@cache
def corpus_dir(seed: int = SEED) -> Path:
    """The built corpus for `seed`, building it (about 10 s) the first time on this machine."""
    target = cache_root() / f"{corpus_version(seed)}"
    if not (target / "corpus.tar.gz").exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".building-", dir=target.parent))
        try:
            build_corpus(tmp, seed)
            try:
                tmp.rename(target)
            except OSError:  # another process finished first: theirs is the same
                pass
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return target


@cache
def corpus_tar(seed: int = SEED) -> bytes:
    return (corpus_dir(seed) / "corpus.tar.gz").read_bytes()


@cache
def sections(seed: int = SEED) -> dict[str, dict[str, int]]:
    return json.loads((corpus_dir(seed) / "sections.json").read_text())
