"""The analyst's tools: `search`, `read` and `tables` over the filings, `python` for arithmetic, `submit`.

All of them act on the sandbox. `setup` places the whole corpus (every document of every company,
about 0.7 MB compressed) in the workspace, and search, read and tables run `fdocs.py` from the
image there. Running them in the sandbox rather than on the host keeps one source of truth: the
model's `python` cells see exactly the files the tools read, a tool needs no host state (so the
same taskpack works with remote podman hosts and in a fresh process after a crash), and a tool's
cost shows up where the episode's other costs are measured. The price is one `exec` per call
(a python3 start, and a BM25 index built on the first search and cached in /tmp).
"""

from __future__ import annotations

import itertools
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ptrain.sandbox.container import Sandbox
from ptrain.taskpack import WORKSPACE, Observation
from ptrain.tools import SubmitTool
from ptrain.tools.truncation import MAX_BYTES, MAX_LINES, truncate_middle

FDOCS = "/opt/ptrain-financial/fdocs.py"
FSCORE = "/opt/ptrain-financial/fscore.py"
FILINGS_DIR = f"{WORKSPACE}/filings"


def schema(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {"name": name, "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required}}  # fmt: skip


async def run_fdocs(sandbox: Sandbox, *args: str, timeout_s: float = 60.0) -> Observation:
    command = " ".join(shlex.quote(a) for a in ("python3", "-I", FDOCS, *args))
    result = await sandbox.exec(
        f"FDOCS_ROOT={FILINGS_DIR} {command}", timeout_s=timeout_s, max_output_bytes=4 * MAX_BYTES
    )
    return Observation(truncate_middle(result.output, MAX_BYTES, MAX_LINES), is_error=not result.ok)


@dataclass
class SearchTool:
    name: str = "search"
    schema: Mapping[str, Any] = field(default_factory=lambda: schema(
        "search",
        "BM25 search over every page of every filing. Returns the best-matching passages with their document and page. "
        "Name the company (or ticker), the line item and the fiscal year.",
        {"query": {"type": "string", "description": "Keywords, e.g. 'Acme total revenue 2024'."},
         "k": {"type": "integer", "description": "How many passages (default 5, at most 20)."}},
        ["query"],
    ))  # fmt: skip

    async def __call__(self, sandbox: Sandbox, arguments: Mapping[str, Any]) -> Observation:
        k = int(arguments.get("k", 5))
        return await run_fdocs(sandbox, "search", "--k", str(k), str(arguments["query"]))


@dataclass
class ReadTool:
    name: str = "read"
    schema: Mapping[str, Any] = field(default_factory=lambda: schema(
        "read",
        "The text of one page of a filing (HTML or PDF, extracted). Documents are named like acme-10k-2024.",
        {"doc": {"type": "string", "description": "Document id, e.g. 'acme-10k-2024'."},
         "page": {"type": "integer", "description": "Page number, from 1."}},
        ["doc", "page"],
    ))  # fmt: skip

    async def __call__(self, sandbox: Sandbox, arguments: Mapping[str, Any]) -> Observation:
        return await run_fdocs(sandbox, "read", str(arguments["doc"]), str(arguments["page"]))


@dataclass
class TablesTool:
    name: str = "tables"
    schema: Mapping[str, Any] = field(default_factory=lambda: schema(
        "tables",
        "The tables on one page of a filing as structured rows: a JSON header line per table, then one JSON "
        "array per row (the label, then the values) with numbers parsed (parentheses are negatives). Mind the unit line.",
        {"doc": {"type": "string", "description": "Document id, e.g. 'acme-10k-2024'."},
         "page": {"type": "integer", "description": "Page number, from 1."}},
        ["doc", "page"],
    ))  # fmt: skip

    async def __call__(self, sandbox: Sandbox, arguments: Mapping[str, Any]) -> Observation:
        return await run_fdocs(sandbox, "tables", str(arguments["doc"]), str(arguments["page"]))


@dataclass
class PythonTool:
    """A Python cell, run with python3 in the workspace; pandas and numpy are installed. Each cell is a fresh process."""

    timeout_s: float = 60.0
    name: str = "python"
    counter: itertools.count = field(default_factory=itertools.count)
    schema: Mapping[str, Any] = field(default_factory=lambda: schema(
        "python",
        "Run Python 3 code (pandas and numpy available) in /workspace, where filings/ holds the documents and "
        "filings/.index/pages.jsonl their extracted pages and tables. Each call is a fresh process: print what you need.",
        {"code": {"type": "string", "description": "The code to run."}},
        ["code"],
    ))  # fmt: skip

    async def __call__(self, sandbox: Sandbox, arguments: Mapping[str, Any]) -> Observation:
        path = f"/tmp/.python/cell_{next(self.counter)}.py"
        await sandbox.write_file(path, str(arguments["code"]))
        result = await sandbox.exec(
            f"cd {WORKSPACE} && python3 {path}", timeout_s=self.timeout_s, max_output_bytes=4 * MAX_BYTES
        )
        text = truncate_middle(result.output, MAX_BYTES, MAX_LINES) or "(no output; print the values you need)"
        if result.timed_out:
            text += f"\n[killed after {self.timeout_s:g} s]"
        elif result.exit_code:
            text += f"\n[exit code {result.exit_code}]"
        return Observation(text, is_error=not result.ok)


def submit_tool() -> SubmitTool:
    return SubmitTool(
        description="Submit the final answer and end the episode: the figure with its unit (e.g. '$1,234 million', "
        "'12.5%', '1.85'), 'yes' or 'no', or a company's name.",
        properties={"answer": {"type": "string", "description": "The answer, with its unit."}},
        required=("answer",),
    )


def analyst_tools() -> list:
    return [SearchTool(), ReadTool(), TablesTool(), PythonTool(), submit_tool()]
