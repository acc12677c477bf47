"""Attacks on the CAD verifier, replayed by `ptrain taskpacks check` (each must score 0).

- bbox-cuboid: a plain `cube` filling the reference's bounding box, written and submitted with the
  taskpack's own tools. It is the shortcut of leaving every feature out, made by an attacker that
  knows the box exactly (from the task's hidden metadata). Under the old reward (the IoU) it earned
  0.93 to 0.99 on blocks, plates and pockets; the shaped score pays only skill over this cuboid.
"""

from __future__ import annotations

from ptrain.taskpack import Probe, Task, ToolCall
from ptrain_cad.generator import PART_FILE
from ptrain_cad.parts import vec


def bounding_box(task: Task) -> tuple[list[float], list[float]] | None:
    """The reference's bounding box (min, max corners) from the hidden metadata; an imported task
    gives only its size (it is aligned before it is measured), so its box starts at the origin."""
    meta = task.metadata
    if "bbox_min" in meta:
        return list(meta["bbox_min"]), list(meta["bbox_max"])
    if "bbox" in meta:
        return [0.0, 0.0, 0.0], [float(x) for x in meta["bbox"]]
    return None


def cuboid_program(lo: list[float], hi: list[float]) -> str:
    size = [b - a for a, b in zip(lo, hi, strict=True)]
    return f"// the bounding box and nothing else\ntranslate({vec(*lo)}) cube({vec(*size)});\n"


def bbox_cuboid(task: Task) -> Probe | None:
    box = bounding_box(task)
    if box is None:
        return None
    calls = (
        ToolCall("str_replace_editor", {"command": "create", "path": PART_FILE, "file_text": cuboid_program(*box)}),
        ToolCall("submit", {"file": PART_FILE}),
    )
    return Probe("bbox-cuboid", calls, "a cube filling the reference's exact bounding box: every feature left out")


def probes(task: Task) -> list[Probe]:
    return [probe for probe in (bbox_cuboid(task),) if probe is not None]
