"""Generated CAD tasks: every part family, every tier, deterministic from a seed.

Task `cad/<family>/<n>` is always the same part on every machine: its parameters come from a
`random.Random` seeded with (seed, family, n), its tier is n mod 3, and its split is the stable
hash of its id (`ptrain.taskpack.split_of`). The reference program goes in `task.metadata`, which
the model never sees; the instruction states every dimension, the origin and the axes, so a
correct part lines up with the reference without any alignment.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable

from ptrain.taskpack import DIFFICULTIES, Task, split_of
from ptrain_cad import prismatic, turned
from ptrain_cad.parts import FN, Part

FAMILIES: dict[str, Callable[[random.Random, str], Part]] = {
    "plate-holes": prismatic.plate_holes,
    "l-bracket": prismatic.l_bracket,
    "box-lid-lip": prismatic.box_lid_lip,
    "hinge-leaf": prismatic.hinge_leaf,
    "countersunk-plate": prismatic.countersunk_plate,
    "chamfered-block": prismatic.chamfered_block,
    "filleted-block": prismatic.filleted_block,
    "slot-pocket": prismatic.slot_pocket,
    "u-channel": prismatic.u_channel,
    "flange": turned.flange,
    "stepped-shaft": turned.stepped_shaft,
    "tube": turned.tube,
    "hex-spacer": turned.hex_spacer,
    "gear-blank": turned.gear_blank,
}
PER_FAMILY = 240  # 14 families x 240 = 3360 tasks, about 2500 of them in train
PART_FILE = "/workspace/part.scad"

TOOLS_NOTE = (
    f"Write the part as an OpenSCAD program in {PART_FILE} (units: mm; use $fn = {FN} for round features). "
    "`render` it to see errors, whether it is one watertight solid, its volume and bounding box; "
    "`views` shows it from the top, front and side. When it matches the drawing, `submit` the file."
)


def part_rng(seed: int, family: str, n: int) -> random.Random:
    digest = hashlib.sha256(f"{seed}/{family}/{n}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def make_part(family: str, n: int, seed: int = 0) -> Part:
    return FAMILIES[family](part_rng(seed, family, n), DIFFICULTIES[n % 3])


def instruction(part: Part) -> str:
    lines = [f"{part.title}.", "", "Dimensions (mm):"] + [f"- {line}" for line in part.dimensions]
    return "\n".join(lines + ["", f"Coordinates: {part.frame}", "", TOOLS_NOTE])


def task_of(part: Part, task_id: str) -> Task:
    return Task(
        id=task_id,
        instruction=instruction(part),
        category=part.family,
        difficulty=part.difficulty,
        split=split_of(task_id),
        metadata={
            "reference_scad": part.scad,
            **({"sketch_scad": part.sketch} if part.sketch else {}),  # the gold program, where there is one
            "features": list(part.features),
            "verifier": "generated",
            "bbox_min": list(part.bbox[0]),  # for the bounding-box probe; checked against the render in the tests
            "bbox_max": list(part.bbox[1]),
        },
    )


def generated_tasks(seed: int = 0, per_family: int = PER_FAMILY) -> list[Task]:
    return [
        task_of(make_part(family, n, seed), f"cad/{family}/{n:04d}" if seed == 0 else f"cad/s{seed}/{family}/{n:04d}")
        for family in FAMILIES
        for n in range(per_family)
    ]
