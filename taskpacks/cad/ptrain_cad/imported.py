"""Imported CAD tasks: a text description plus a reference mesh, as published benchmarks give them.

A directory of per-task YAML files, each:

    description: "A mounting bracket: ..."     what the model is asked to build
    reference_mesh: bracket.stl                the reference solid (STL), relative to the YAML file
    bbox: [60, 40, 30]                         expected bounding box size in mm (checked against the mesh)
    bodies: 1                                  expected number of separate solids
    category: bracket                          optional; default "imported"
    difficulty: medium                         optional; default "medium"
    solution: bracket.scad                     optional reference program, used as gold

Such descriptions rarely fix an origin or orientation, so the verifier aligns the submission to the
reference before measuring (principal axes, the 24 axis flips, ICP) and says so in the details.
The taskpack reads the directory named by PTRAIN_CAD_IMPORT_DIR; `load_imported` reads any.
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from ptrain.errors import ConfigError
from ptrain.taskpack import DIFFICULTIES, Task, split_of
from ptrain_cad.generator import PART_FILE
from ptrain_cad.measure import geometry

BBOX_SLACK_MM = 1.0
NOTE = (
    f"Write the part as an OpenSCAD program in {PART_FILE} (units: mm). Place and orient it as you like: it is "
    "aligned to the reference before it is measured. `render` and `views` show what you built; `submit` the file when done."
)


def import_dir() -> Path | None:
    value = os.environ.get("PTRAIN_CAD_IMPORT_DIR")
    return Path(value) if value else None


def load_task(path: Path) -> Task:
    """One YAML file as a Task; a ConfigError says what is missing or inconsistent."""
    try:
        spec = yaml.safe_load(path.read_text()) or {}
        mesh = (path.parent / spec["reference_mesh"]).read_bytes()
        description, bodies, size = (
            str(spec["description"]).strip(),
            int(spec["bodies"]),
            [float(x) for x in spec["bbox"]],
        )
        if len(size) != 3:
            raise ValueError(f"bbox must be [x, y, z], got {spec['bbox']}")
        vertices, _ = geometry.read_stl(mesh)
    except (OSError, KeyError, TypeError, ValueError, yaml.YAMLError) as e:
        raise ConfigError(
            f"CAD import {path}: {type(e).__name__}: {e}",
            fix="each YAML needs description, reference_mesh (an STL beside it), bbox [x, y, z] and bodies",
        ) from e
    extents = (vertices.max(axis=0) - vertices.min(axis=0)).tolist()
    if any(abs(a - b) > BBOX_SLACK_MM for a, b in zip(sorted(extents), sorted(size), strict=True)):
        raise ConfigError(f"CAD import {path}: bbox {size} does not match the mesh's {[round(e, 2) for e in extents]}")
    difficulty = spec.get("difficulty", "medium")
    if difficulty not in DIFFICULTIES:
        raise ConfigError(f"CAD import {path}: difficulty {difficulty!r} is not one of {DIFFICULTIES}")
    task_id = f"cad-import/{spec.get('id', path.stem)}"
    solution = spec.get("solution")
    metadata = {"verifier": "imported", "reference_stl": mesh, "bodies": bodies, "bbox": size, "source": str(path)}
    if solution:
        metadata["reference_scad"] = (path.parent / solution).read_text()
    return Task(
        id=task_id,
        instruction=f"{description}\n\nOverall size about {' x '.join(f'{x:g}' for x in size)} mm; "
        f"{bodies} solid bod{'y' if bodies == 1 else 'ies'}.\n\n{NOTE}",
        category=str(spec.get("category", "imported")),
        difficulty=difficulty,
        split=str(spec.get("split") or split_of(task_id)),
        metadata=metadata,
    )


def load_imported(directory: Path | None) -> list[Task]:
    if directory is None or not directory.is_dir():
        return []
    return [load_task(path) for path in sorted(directory.glob("*.yaml")) + sorted(directory.glob("*.yml"))]
