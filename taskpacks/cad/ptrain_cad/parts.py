"""What a part family produces: a `Part` (an engineer's description plus the hidden reference
OpenSCAD program), and the small helpers the families share to write both.

Reference programs are written the way a careful CAD user would write them for OpenSCAD 2021:
2D profiles extruded (`linear_extrude`, `rotate_extrude`) wherever possible, because 2D booleans
are fast and 3D (CGAL) booleans are slow.

Some parts also have a sketch: the same solid written straight from the drawing, every number as the
instruction states it and any arithmetic left to OpenSCAD (`d = 28`, not `r = 14`; `60 - 11`, not
`49`). Where a part has one, it is the gold solution and so what demonstrations teach: a small model
can learn to copy the drawing's numbers into a program, not to halve and subtract them in its head.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

FN = 48  # facets on round features; stated in every instruction


@dataclass(frozen=True)
class Part:
    family: str
    difficulty: str  # easy / medium / hard by number of features
    title: str  # "Mounting plate with four corner holes"
    features: tuple[str, ...]
    dimensions: tuple[str, ...]  # one line per feature, in mm
    frame: str  # where the origin is and how the axes run
    scad: str  # the reference program
    bbox: tuple[tuple[float, float, float], tuple[float, float, float]]  # (min, max) of the rendered reference, mm
    sketch: str = ""  # the same solid in the drawing's own numbers (the gold program), or "" for the reference


def box(lo: tuple[float, float, float], hi: tuple[float, float, float]) -> tuple:
    """A bounding box as `Part.bbox` holds it: the corners rounded as the program writes its numbers."""
    return tuple(round(x, 3) + 0.0 for x in lo), tuple(round(x, 3) + 0.0 for x in hi)


def mm(x: float) -> str:
    """A dimension as an engineer writes it: 12, 12.5, 3.4."""
    return f"{round(x, 3):g}"


def pick(rng: random.Random, values) -> float:
    return rng.choice(list(values))


def steps(lo: float, hi: float, step: float) -> list[float]:
    """lo, lo+step, ... up to hi inclusive."""
    out, x = [], lo
    while x <= hi + 1e-9:
        out.append(round(x, 3))
        x += step
    return out


def vec(*xs: float) -> str:
    return "[" + ", ".join(mm(x) for x in xs) + "]"


def program(title: str, body: str) -> str:
    return f"// {title} (reference)\n$fn = {FN};\n\n{body.strip()}\n"


def sketch(body: str) -> str:
    """A sketch program: the facet count the instruction states, then the body in the drawing's numbers."""
    return f"$fn = {FN};\n{body.strip()}\n"


def circles_2d(points: list[tuple[float, float]], d: float) -> str:
    return "\n".join(f"    translate({vec(x, y)}) circle(d = {mm(d)});" for x, y in points)


def countersunk_holes(points: list[tuple[float, float]], d: float, head: float, top: float) -> str:
    """Through holes Ø`d` with 90° countersinks to Ø`head` at z=`top`, as 3D children of a difference:
    one turned cutter per hole, running past both faces so no surface of it lies on the part's."""
    depth = (head - d) / 2
    profile = ", ".join(
        vec(r, z) for r, z in [(0, -1), (d / 2, -1), (d / 2, top - depth), (head / 2 + 1, top + 1), (0, top + 1)]
    )
    return "\n".join(f"  translate({vec(x, y, 0)}) rotate_extrude() polygon([{profile}]);" for x, y in points)


def points_text(points: list[tuple[float, float]], axes: str = "XY") -> str:
    return ", ".join(f"({axes[0]} {mm(x)}, {axes[1]} {mm(y)})" for x, y in points)
