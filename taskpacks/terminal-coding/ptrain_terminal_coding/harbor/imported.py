"""An imported task on disk: where imports live, the record each carries, and the /tmp roots its tests use.

Conversion writes these names and loading reads them, so they live here, apart from both.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ptrain import paths

META = "ptrain-import.json"
VERIFY_ROOT = "/tmp/ptrain-verify"  # converted tests use this; verification swaps in a random name
SOLUTION_ROOT = "/tmp/ptrain-solution"  # where gold unpacks solution/ (Harbor's /solution)


@dataclass
class ImportResult:
    """One task's import: where it went and what was changed, or why it could not be converted."""

    name: str
    layout: str  # "harbor" | "terminal-bench"
    source: Path
    dest: Path | None = None
    base: str = ""  # the Dockerfile's FROM
    workdir: str = ""
    env: dict[str, str] = field(default_factory=dict)  # the Dockerfile's ENV (the sandbox shell starts clean)
    notes: list[str] = field(default_factory=list)  # mapped / replaced / dropped, one line each
    warnings: list[str] = field(default_factory=list)  # changes that may make the task fail here
    requirements: list[str] = field(default_factory=list)  # Python requirements its build and tests asked for
    pins: list[str] = field(default_factory=list)  # what they resolved to: every wheel in the image, name==version
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error

    @property
    def status(self) -> str:
        return "refused" if self.error else "imported with warnings" if self.warnings else "imported"


def import_dir() -> Path:
    return Path(os.environ.get("PTRAIN_IMPORT_DIR") or paths.home() / "imported" / "terminal-coding")
