"""Search, read and tables over the filings in a sandbox: BM25 over chunks of every page of every document.

Standard library only. This file is copied into the sandbox image and run there by the
`search`, `read` and `tables` tools (`python3 fdocs.py search --k 5 QUERY`, `read DOC PAGE`,
`tables DOC PAGE`); the host imports the same file to test it. It reads the corpus index that
`setup` placed in the workspace (`filings/.index/pages.jsonl`: each page's extracted text and
tables; `catalog.json`; and `bm25.json`, the index the host built with this same code, so no
episode spends a second building it; without one it is built on first use and kept in /tmp).

Chunks are a page's paragraphs, merged up to CHUNK_WORDS words, and each row of each table on its own
under the table's title, unit and column header (a line item is what a question names: as one chunk
among a whole statement's rows, "cash and cash equivalents" ranked the balance sheet first for 26 of
154 balance-sheet questions, as a row of its own for 128). Each chunk is indexed with its document's
title (company, ticker, fiscal year), so "Acme revenue 2024" finds the revenue row of Acme's income
statement even though the statement itself never names the company.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections import Counter, defaultdict
from itertools import pairwise
from pathlib import Path

CHUNK_WORDS = 120
K1, B = 1.5, 0.75
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "what",
        "which",
        "with",
    ]
)
TOKEN = re.compile(r"\d[\d,]*(?:\.\d+)?|[a-z]+")


def tokenize(text: str) -> list[str]:
    """Lower-case words and numbers (thousands separators dropped), without stopwords."""
    return [t.replace(",", "").rstrip(",") for t in TOKEN.findall(text.lower()) if t not in STOPWORDS]


def split_block(block: str, limit: int) -> list[str]:
    """A block of more than `limit` words cut between lines; table pieces keep the first two lines (title, unit)."""
    lines = block.split("\n")
    head = lines[:2] if len(lines) > 3 else []
    pieces, current = [], []
    for line in lines[len(head) :]:
        if current and len(" ".join(head + current + [line]).split()) > limit:
            pieces.append("\n".join(head + current))
            current = []
        current.append(line)
    if current:
        pieces.append("\n".join(head + current))
    return pieces


def table_rows(block: str) -> tuple[str, list[str]]:
    """A block's tables as passages of one row each, under the table's title, unit line ("(in
    thousands)") and column header of years where it has one; and the block's text before its first
    table. A table runs from its title (the line above a unit line) to the next table's title: a PDF page
    comes as one block. Section labels ("Current assets:") are not rows, and runs of spaces (the page's
    column alignment) become two."""
    lines = [re.sub(r"\s{3,}", "  ", line.strip()) for line in block.split("\n") if line.strip()]
    titles = [i - 1 for i in range(1, len(lines) - 1) if lines[i].startswith("(in ")]
    rows: list[str] = []
    for title, end in pairwise([*titles, len(lines)]):
        header = lines[title + 2]
        years = "$" not in header and all(re.fullmatch(r"(19|20)\d\d", n) for n in re.findall(r"\d[\d,.]*", header))
        top = title + 3 if years else title + 2
        rows += ["\n".join([*lines[title:top], row]) for row in lines[top:end] if not row.endswith(":")]
    return "\n".join(lines[: titles[0]]) if titles else block, rows


def chunk_page(text: str, limit: int = CHUNK_WORDS) -> list[str]:
    """A page's text as chunks: each table row on its own (`table_rows`), the rest at most about `limit`
    words, split at paragraph and line boundaries."""
    chunks: list[str] = []
    current: list[str] = []  # paragraphs merged until the next would pass `limit` words

    def flush() -> None:
        if current:
            chunks.append("\n\n".join(current))
            current.clear()

    for block in (b.strip() for b in text.split("\n\n") if b.strip()):
        before, rows = table_rows(block)
        for piece in split_block(before, limit) if before else []:
            if current and len(" ".join(current + [piece]).split()) > limit:
                flush()
            current.append(piece)
        if rows:
            flush()
            chunks.extend(rows)
    flush()
    return chunks


class BM25:
    """Okapi BM25 over tokenised documents, with an inverted index."""

    def __init__(self, docs: list[list[str]], k1: float = K1, b: float = B):
        self.k1, self.b, self.n = k1, b, len(docs)
        self.lengths = [len(d) for d in docs]
        self.avgdl = sum(self.lengths) / max(1, self.n)
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i, doc in enumerate(docs):
            for term, tf in Counter(doc).items():
                self.postings[term].append((i, tf))
        self.postings = dict(self.postings)

    def state(self) -> dict:
        return {"k1": self.k1, "b": self.b, "lengths": self.lengths, "postings": self.postings}

    @classmethod
    def from_state(cls, state: dict) -> BM25:
        bm25 = cls([], state["k1"], state["b"])
        bm25.lengths, bm25.postings, bm25.n = state["lengths"], state["postings"], len(state["lengths"])
        bm25.avgdl = sum(bm25.lengths) / max(1, bm25.n)
        return bm25

    def idf(self, term: str) -> float:
        df = len(self.postings.get(term, ()))
        return math.log((self.n - df + 0.5) / (df + 0.5) + 1)

    def scores(self, query: list[str]) -> dict[int, float]:
        out: dict[int, float] = defaultdict(float)
        for term in set(query):
            idf = self.idf(term)
            for i, tf in self.postings.get(term, ()):
                norm = tf + self.k1 * (1 - self.b + self.b * self.lengths[i] / self.avgdl)
                out[i] += idf * tf * (self.k1 + 1) / norm
        return out

    def top(self, query: list[str], k: int) -> list[tuple[int, float]]:
        ranked = sorted(self.scores(query).items(), key=lambda item: (-item[1], item[0]))
        return ranked[:k]


def root() -> Path:
    return Path(os.environ.get("FDOCS_ROOT", "/workspace/filings"))


def load_pages(base: Path) -> tuple[list[dict], dict[str, dict]]:
    with open(base / ".index" / "pages.jsonl") as f:
        pages = [json.loads(line) for line in f]
    with open(base / ".index" / "catalog.json") as f:
        catalog = {d["doc"]: d for d in json.load(f)}
    return pages, catalog


def build_index(pages: list[dict], catalog: dict[str, dict]) -> tuple[list[dict], BM25]:
    chunks = [{"doc": p["doc"], "page": p["page"], "text": text} for p in pages for text in chunk_page(p["text"])]
    docs = [tokenize(catalog[c["doc"]]["title"] + "\n" + c["text"]) for c in chunks]
    return chunks, BM25(docs)


def save_index(path: Path, chunks: list[dict], bm25: BM25) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps({"chunks": chunks, **bm25.state()}, separators=(",", ":")))
    os.replace(tmp, path)


def index(base: Path) -> tuple[list[dict], BM25]:
    """The chunks and their BM25 index: shipped with the corpus (`.index/bm25.json`), else built once into /tmp."""
    shipped = base / ".index" / "bm25.json"
    stat = (base / ".index" / "pages.jsonl").stat()
    built = Path(os.environ.get("FDOCS_CACHE", "/tmp/.fdocs")) / f"bm25-{stat.st_size}-{int(stat.st_mtime)}.json"
    for path in (shipped, built):
        if path.exists():
            state = json.loads(path.read_text())
            return state["chunks"], BM25.from_state(state)
    chunks, bm25 = build_index(*load_pages(base))
    save_index(built, chunks, bm25)
    return chunks, bm25


def search(base: Path, query: str, k: int = 5) -> str:
    chunks, bm25 = index(base)
    hits = bm25.top(tokenize(query), k)
    if not hits:
        return "No results. Try other words (company name, ticker, line item, fiscal year)."
    out = []
    for rank, (i, score) in enumerate(hits, 1):
        c = chunks[i]
        snippet = c["text"] if len(c["text"]) <= 600 else c["text"][:600] + " ..."
        out.append(f"[{rank}] doc={c['doc']} page={c['page']} score={score:.2f}\n{snippet}")
    return "\n\n".join(out)


def find_doc(catalog: dict[str, dict], doc: str) -> str:
    key = Path(doc.strip()).name.lower().removesuffix(".html").removesuffix(".pdf")
    if key in catalog:
        return key
    near = sorted(d for d in catalog if d.split("-")[0] == key.split("-")[0]) or sorted(catalog)[:10]
    raise LookupError(f"no document {doc!r}; documents like it: {', '.join(near)}")


def page_of(base: Path, doc: str, page: int) -> tuple[dict, dict]:
    with open(base / ".index" / "catalog.json") as f:
        catalog = {d["doc"]: d for d in json.load(f)}
    doc = find_doc(catalog, doc)
    entry = catalog[doc]
    if not 1 <= page <= entry["pages"]:
        raise LookupError(f"{doc} has pages 1 to {entry['pages']}, not {page}")
    prefix = json.dumps({"doc": doc, "page": page})[:-1] + ","  # lines start with these two keys
    with open(base / ".index" / "pages.jsonl") as f:
        return next(json.loads(line) for line in f if line.startswith(prefix)), entry


def read(base: Path, doc: str, page: int) -> str:
    p, entry = page_of(base, doc, page)
    return f"{entry['title']} ({entry['file']}), page {page} of {entry['pages']}\n\n{p['text']}"


def number(cell: str) -> float | int | str:
    """A table cell as a number when it is one: "$(1,234)" -> -1234, "0.16" -> 0.16."""
    text = cell.strip().replace("$", "").replace(",", "").replace(" ", "")
    negative = text.startswith("(") and text.endswith(")")
    text = text.strip("()")
    try:
        value = float(text)
    except ValueError:
        return cell
    value = -value if negative else value
    return int(value) if value.is_integer() and "." not in text else value


def tables(base: Path, doc: str, page: int) -> str:
    p, entry = page_of(base, doc, page)
    if not p["tables"]:
        return f"No tables on {entry['doc']} page {page}."
    out = [f"{entry['title']}, page {page}: {len(p['tables'])} table(s); numbers parsed, negatives from parentheses"]
    for t in p["tables"]:
        out.append(json.dumps({"title": t["title"], "unit": t["unit"], "header": t["header"]}))
        out.extend(json.dumps([row[0], *(number(c) for c in row[1:])]) for row in t["rows"])
    return "\n".join(out)


def main(argv: list[str]) -> int:
    base = root()
    try:
        if argv[:1] == ["search"]:
            k = int(argv[2]) if argv[1:2] == ["--k"] else 5
            query = " ".join(argv[3:] if argv[1:2] == ["--k"] else argv[1:])
            print(search(base, query, max(1, min(k, 20))))
        elif argv[:1] in (["read"], ["tables"]) and len(argv) == 3:
            print((read if argv[0] == "read" else tables)(base, argv[1], int(argv[2])))
        else:
            print("usage: fdocs.py search [--k K] QUERY | read DOC PAGE | tables DOC PAGE", file=sys.stderr)
            return 2
    except (LookupError, ValueError) as e:
        print(str(e).strip("'\""), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
