"""Imported CAD tasks: a text description plus a reference mesh, as published benchmarks give them.

A directory of per-task YAML files in ptrain's schema, each:

    description: "A mounting bracket: ..."     what the model is asked to build
    reference_mesh: bracket.stl                the reference solid (STL), relative to the YAML file
    bbox: [60, 40, 30]                         expected bounding box size in mm (checked against the mesh)
    bodies: 1                                  expected number of separate solids
    category: bracket                          optional; default "imported"
    difficulty: medium                         optional; default "medium"
    solution: bracket.scad                     optional reference program, used as gold
    split: test                                optional; default "test" (an imported benchmark is held out)

or in CadEval's, as published (github.com/wgpatrick/cadeval, tasks/*.yaml beside reference/*.stl):

    task_id: task1
    description: "A simple hex nut ..."
    reference_stl: ./reference/task1.stl       relative to the YAML file, or to the folder above it
    requirements:
      bounding_box: [11.41, 10.77, 5.0]
      topology_requirements:
        expected_component_count: 1            optional; default 1
    manual_operations: 4                       optional; sets the tier (<= 3 easy, <= 6 medium, else hard)

`ptrain taskpacks import-cad SRC` reads either, checks every file (the mesh, its bounding box, the
gold program if any) and writes the good ones in ptrain's schema to the import directory, with a
report of each file: imported, imported with warnings, or refused with the reason. A file that
cannot be read is skipped with a warning when the taskpack loads, and never stops the others.

Such descriptions rarely fix an origin or orientation, so the verifier aligns the submission to the
reference before measuring (principal axes, the 24 axis flips, ICP) and says so in the details.
The taskpack reads $PTRAIN_CAD_IMPORT_DIR (default ~/.cache/ptrain/imported/cad); `load_imported` reads any.
"""

from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ptrain import paths
from ptrain.errors import ConfigError
from ptrain.taskpack import DIFFICULTIES, Task
from ptrain_cad.generator import PART_FILE
from ptrain_cad.measure import geometry

BBOX_SLACK_MM = 1.0
NOTE = (
    f"Write the part as an OpenSCAD program in {PART_FILE} (units: mm). Place and orient it as you like: it is "
    "aligned to the reference before it is measured. `render` and `views` show what you built; `submit` the file when done."
)


def import_dir() -> Path:
    """Where imported tasks are read from (and `import-cad` writes by default)."""
    return Path(os.environ.get("PTRAIN_CAD_IMPORT_DIR") or paths.home() / "imported" / "cad")


CADEVAL_KEYS = {"task_id", "description", "reference_stl", "requirements", "manual_operations"}
PTRAIN_KEYS = {"id", "description", "reference_mesh", "bbox", "bodies", "category", "difficulty", "solution", "split",
               "source"}  # fmt: skip


def normalise(spec: dict) -> dict:
    """CadEval's schema read into ptrain's (ptrain's passes through unchanged)."""
    if "reference_stl" not in spec or "reference_mesh" in spec:
        return spec
    requirements = spec.get("requirements") or {}
    out = {"id": spec.get("task_id"), "description": spec.get("description"), "reference_mesh": spec["reference_stl"],
           "bbox": requirements.get("bounding_box"), "bodies": topology_of(spec).get("expected_component_count", 1),
           "category": spec.get("category", "cadeval")}  # fmt: skip
    operations = spec.get("manual_operations")
    if isinstance(operations, int):
        out["difficulty"] = "easy" if operations <= 3 else "medium" if operations <= 6 else "hard"
    return {**out, **{k: v for k, v in spec.items() if k in ("difficulty", "split", "solution")}}


def topology_of(spec: dict) -> dict:
    """CadEval's topology requirements: under `requirements`, as its schema has them, or beside it."""
    return (spec.get("requirements") or {}).get("topology_requirements") or spec.get("topology_requirements") or {}


def beside(path: Path, name: str) -> Path:
    """A file a YAML names: relative to the YAML's folder, or to the folder above it (CadEval's layout)."""
    for root in (path.parent, path.parent.parent):
        if (root / name).is_file():
            return root / name
    return path.parent / name  # not there: the error names where it was looked for first


def load_task(path: Path, split: str = "") -> Task:
    """One YAML file (ptrain's schema or CadEval's) as a Task; a ConfigError says what is missing or wrong."""
    try:
        spec = normalise(yaml.safe_load(path.read_text()) or {})
        mesh = beside(path, spec["reference_mesh"]).read_bytes()
        description, bodies, size = (
            str(spec["description"]).strip(),
            int(spec["bodies"]),
            [float(x) for x in spec["bbox"]],
        )
        if len(size) != 3:
            raise ValueError(f"bbox must be [x, y, z], got {spec['bbox']}")
        vertices, _ = geometry.read_stl(mesh)
    except (OSError, KeyError, TypeError, ValueError, AttributeError, yaml.YAMLError) as e:
        raise ConfigError(
            f"CAD import {path}: {type(e).__name__}: {e}",
            fix="each YAML needs description, reference_mesh (an STL beside it), bbox [x, y, z] and bodies "
            "(or CadEval's task_id, description, reference_stl, requirements.bounding_box)",
        ) from e
    extents = (vertices.max(axis=0) - vertices.min(axis=0)).tolist()
    if any(abs(a - b) > BBOX_SLACK_MM for a, b in zip(sorted(extents), sorted(size), strict=True)):
        raise ConfigError(f"CAD import {path}: bbox {size} does not match the mesh's {[round(e, 2) for e in extents]}")
    difficulty = spec.get("difficulty", "medium")
    if difficulty not in DIFFICULTIES:
        raise ConfigError(f"CAD import {path}: difficulty {difficulty!r} is not one of {DIFFICULTIES}")
    task_id = f"cad-import/{spec.get('id') or path.stem}"
    solution = spec.get("solution")
    metadata = {"verifier": "imported", "reference_stl": mesh, "bodies": bodies, "bbox": size, "source": str(path)}
    if solution:
        try:
            metadata["reference_scad"] = beside(path, solution).read_text()
        except OSError as e:
            raise ConfigError(f"CAD import {path}: solution {solution}: {e}") from e
    return Task(
        id=task_id,
        instruction=f"{description}\n\nOverall size about {' x '.join(f'{x:g}' for x in size)} mm; "
        f"{bodies} solid bod{'y' if bodies == 1 else 'ies'}.\n\n{NOTE}",
        category=str(spec.get("category", "imported")),
        difficulty=difficulty,
        split=split or str(spec.get("split") or "test"),
        metadata=metadata,
    )


def task_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.yaml")) + sorted(directory.glob("*.yml"))


def load_imported(directory: Path | None) -> list[Task]:
    """The import directory's tasks; a file that cannot be read is skipped with a warning naming it."""
    if directory is None or not directory.is_dir():
        return []
    tasks = []
    for path in task_files(directory):
        try:
            tasks.append(load_task(path))
        except ConfigError as e:
            warnings.warn(f"{e} (skipped; the other imported tasks are loaded)", CadImportWarning, stacklevel=2)
    return tasks


class CadImportWarning(UserWarning):
    """An imported CAD task that could not be loaded."""


@dataclass
class ImportResult:
    """One YAML file's import: the task it became and what to know about it, or why it was refused."""

    source: Path
    task_id: str = ""
    split: str = ""
    warnings: list[str] = field(default_factory=list)
    error: str = ""

    @property
    def status(self) -> str:
        return "refused" if self.error else "imported with warnings" if self.warnings else "imported"

    def as_dict(self) -> dict:
        return {"source": str(self.source), "task": self.task_id, "split": self.split, "status": self.status,
                "warnings": self.warnings, "error": self.error}  # fmt: skip


def sources(src: Path) -> list[Path]:
    """The YAML files under `src`: the file itself, its own, or its tasks/ folder's (a CadEval checkout)."""
    if src.is_file():
        return [src]
    found = task_files(src)
    return found or task_files(src / "tasks")


def import_tasks(src: Path, dest: Path, split: str = "test") -> list[ImportResult]:
    """Every YAML under `src` checked and, if good, written to `dest` in ptrain's schema with its mesh
    (and gold program) beside it; `split` is where the imported tasks go ("" keeps a file's own)."""
    results = []
    dest.mkdir(parents=True, exist_ok=True)
    for path in sources(src):
        result = ImportResult(path)
        results.append(result)
        try:
            task = load_task(path, split)  # a ConfigError naming the file and what is wrong
            raw = yaml.safe_load(path.read_text()) or {}
        except (ConfigError, OSError, yaml.YAMLError) as e:
            result.error = str(e)
            continue
        spec = normalise(raw)
        unknown = sorted(set(raw) - CADEVAL_KEYS - PTRAIN_KEYS)
        if unknown:
            result.warnings.append(f"ignored keys: {', '.join(unknown)}")
        if "reference_scad" not in task.metadata:
            result.warnings.append("no gold program: `taskpacks check` shows it as 'no gold', never as passed")
        if "reference_stl" in raw and "expected_component_count" not in topology_of(raw):
            result.warnings.append("no expected_component_count: 1 body assumed")
        if "difficulty" not in spec:
            result.warnings.append("no difficulty (or manual_operations): 'medium' assumed")
        name = re.sub(r"[^\w.-]+", "-", task.id.split("/", 1)[1])
        earlier = dest / f"{name}.yaml"
        if earlier.exists() and (yaml.safe_load(earlier.read_text()) or {}).get("source") != str(path):
            result.warnings.append(f"replaces {earlier}, imported from another file with the same id")
        (dest / f"{name}.stl").write_bytes(task.metadata["reference_stl"])
        out = {"id": name, "description": spec["description"], "reference_mesh": f"{name}.stl",
               "bbox": task.metadata["bbox"], "bodies": task.metadata["bodies"], "category": task.category,
               "difficulty": task.difficulty, "split": task.split, "source": str(path)}  # fmt: skip
        if "reference_scad" in task.metadata:
            (dest / f"{name}.scad").write_text(task.metadata["reference_scad"])
            out["solution"] = f"{name}.scad"
        (dest / f"{name}.yaml").write_text(yaml.safe_dump(out, sort_keys=False, allow_unicode=True))
        result.task_id, result.split = task.id, task.split
    return results
