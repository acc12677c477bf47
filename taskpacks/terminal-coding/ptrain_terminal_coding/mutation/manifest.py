"""mutants.json: the kept mutants, written by the build and read back checked against the projects.

The manifest stores a digest of each project's files (not of this code), so loading tasks refuses a
manifest built from projects that have changed since, and says how to rebuild it.
"""

from __future__ import annotations

import json
from pathlib import Path

from ptrain.errors import ConfigError
from ptrain_terminal_coding.mutation.enumeration import PROJECTS_DIR, digest, read_project

MANIFEST = Path(__file__).parents[1] / "mutants.json"
REBUILD = "python -m ptrain_terminal_coding.mutation --build"


def write_manifest(data: dict, path: Path) -> None:
    """JSON with one mutant per line: small, diffable, and byte-identical for the same content."""
    head = {key: value for key, value in data.items() if key != "mutants"}
    lines = [json.dumps(m, sort_keys=True) for m in data["mutants"]]
    head_text = json.dumps(head, indent=1, sort_keys=True).removesuffix("\n}")
    text = head_text + ',\n "mutants": [\n' + ",\n".join(lines) + "\n ]\n}\n"
    path.write_text(text)


def load_manifest(manifest: Path = MANIFEST, projects_dir: Path = PROJECTS_DIR) -> tuple[dict, dict[str, dict]]:
    """The manifest and each project's files, checked against the digests it was built from."""
    try:
        data = json.loads(manifest.read_text())
    except (OSError, ValueError) as e:
        raise ConfigError(f"cannot read the mutant manifest {manifest}: {e}", fix=f"run `{REBUILD}`") from e
    projects = {name: read_project(projects_dir / name) for name in data["projects"]}
    stale = [name for name, files in projects.items() if digest(files) != data["projects"][name]["sha256"]]
    if stale:
        raise ConfigError(
            f"the mutant manifest is stale: projects {stale} changed since it was built", fix=f"run `{REBUILD}`"
        )
    return data, projects
