"""Turned part families (round about the Z axis): flanges, stepped shafts, tubes, hex spacers, gear blanks.

Each family is `family(rng, difficulty) -> Part`, as in `prismatic.py`. Bodies of revolution are
`rotate_extrude` of a half-profile in the XZ plane (fast and exact); holes are cut afterwards.
"""

from __future__ import annotations

import math
import random

from ptrain_cad.parts import Part, box, circles_2d, mm, pick, program, sketch, steps, vec

AXIS_FRAME = "Origin at the centre of the bottom face; the part's axis is the Z axis, pointing up."


def revolve(points: list[tuple[float, float]]) -> str:
    """rotate_extrude of a closed half-profile given as (radius, z) points."""
    return f"rotate_extrude() polygon([{', '.join(vec(r, z) for r, z in points)}]);"


def round_box(diameter: float, height: float) -> tuple:
    """The bounding box of a part turned about Z from Z = 0 (48 facets put a vertex on each axis)."""
    return box((-diameter / 2, -diameter / 2, 0), (diameter / 2, diameter / 2, height))


def bolt_circle(n: int, pcd: float, start_deg: float = 0) -> list[tuple[float, float]]:
    return [
        (
            pcd / 2 * math.cos(math.radians(start_deg + i * 360 / n)),
            pcd / 2 * math.sin(math.radians(start_deg + i * 360 / n)),
        )
        for i in range(n)
    ]


def flange(rng: random.Random, difficulty: str) -> Part:
    od, t = pick(rng, steps(60, 140, 10)), pick(rng, (6, 8, 10, 12))
    bore = pick(rng, steps(10, od * 0.3, 2))
    n, d = pick(rng, (4, 6, 8)), pick(rng, (5.5, 6.6, 9))
    features = ["disc", "centre bore", f"{n}-hole bolt circle"]
    hub_d, hub_h = 0.0, 0.0
    if difficulty != "easy":
        hub_d, hub_h = pick(rng, steps(bore + 10, od * 0.5, 2)), pick(rng, steps(5, 20, 5))
        features.append("raised hub")
    pcd = pick(rng, steps(max(hub_d, bore) + d + 6, od - d - 6, 2))
    dims = [f"Disc Ø{mm(od)}, {mm(t)} thick.", f"Centre bore Ø{mm(bore)} right through.",
            f"{n} through holes Ø{mm(d)} equally spaced on a Ø{mm(pcd)} pitch circle, the first on the +X axis."]  # fmt: skip
    profile = [(bore / 2, 0), (od / 2, 0), (od / 2, t), (bore / 2, t)]
    if hub_d:
        dims.append(
            f"A raised hub Ø{mm(hub_d)} standing {mm(hub_h)} above the top face (to Z {mm(t + hub_h)}); the bore runs through it."
        )
        profile = [
            (bore / 2, 0),
            (od / 2, 0),
            (od / 2, t),
            (hub_d / 2, t),
            (hub_d / 2, t + hub_h),
            (bore / 2, t + hub_h),
        ]
    cuts = [f"  linear_extrude(height = {mm(3 * t)}, center = true) {{\n{circles_2d(bolt_circle(n, pcd), d)}\n  }}"]
    if difficulty == "hard":
        cb_d, cb_depth = 2 * bore if 2 * bore < (hub_d or od) - 4 else bore + 4, pick(rng, (2, 3, 4))
        features.append("counterbore")
        dims.append(f"The bore is counterbored Ø{mm(cb_d)}, {mm(cb_depth)} deep from the bottom face.")
        cuts.append(f"  translate([0, 0, -1]) cylinder(h = {mm(cb_depth + 1)}, d = {mm(cb_d)});")
    scad = f"difference() {{\n  {revolve(profile)}\n" + "\n".join(cuts) + "\n}"
    return Part("flange", difficulty, "Flange", tuple(features), tuple(dims), AXIS_FRAME, program("flange", scad),
                round_box(od, t + hub_h))  # fmt: skip


def stepped_shaft(rng: random.Random, difficulty: str) -> Part:
    n = {"easy": 2, "medium": 3, "hard": 4}[difficulty]
    diameters = sorted(rng.sample(steps(8, 40, 2), n), reverse=True)
    lengths = [pick(rng, steps(10, 50, 5)) for _ in range(n)]
    features = [f"{n} diameters"]
    dims = [
        "Coaxial steps from Z = 0 upward: "
        + ", then ".join(f"Ø{mm(d)} x {mm(length)} long" for d, length in zip(diameters, lengths, strict=True))
        + "."
    ]
    profile, z = [(0, 0)], 0.0
    c = pick(rng, (1, 1.5)) if difficulty != "easy" else 0
    for i, (d, length) in enumerate(zip(diameters, lengths, strict=True)):
        profile += (
            [(d / 2, z), (d / 2, z + length)]
            if i < n - 1 or not c
            else [(d / 2, z), (d / 2, z + length - c), (d / 2 - c, z + length)]
        )
        z += length
    profile.append((0, z))
    if c:
        features.append("end chamfer")
        dims.append(f"The top end (Z {mm(z)}) chamfered {mm(c)} x 45°.")
    cuts = []
    if difficulty != "easy":
        bore = pick(rng, steps(3, diameters[-1] / 2, 1))
        features.append("centre bore")
        dims.append(f"An axial hole Ø{mm(bore)}, {mm(lengths[-1])} deep, drilled from the top end.")
        cuts.append(f"  translate([0, 0, {mm(z - lengths[-1])}]) cylinder(h = {mm(lengths[-1] + 1)}, d = {mm(bore)});")
    if difficulty == "hard":
        cross, zc = pick(rng, steps(3, diameters[0] / 3, 1)), lengths[0] / 2
        features.append("cross hole")
        dims.append(f"A cross hole Ø{mm(cross)} right through along the Y axis, at Z {mm(zc)}.")
        cuts.append(
            f"  translate({vec(0, -diameters[0], zc)}) rotate([-90, 0, 0]) cylinder(h = {mm(2 * diameters[0])}, d = {mm(cross)});"
        )
    body = revolve(profile)
    scad = f"difference() {{\n  {body}\n" + "\n".join(cuts) + "\n}" if cuts else body
    frame = "Origin at the centre of the bottom end face; the shaft's axis is the Z axis, pointing up."
    (d1, d2), (l1, l2) = diameters[:2], lengths[:2]
    drawn = f"cylinder(d = {mm(d1)}, h = {mm(l1)});\ntranslate([0, 0, {mm(l1)}]) cylinder(d = {mm(d2)}, h = {mm(l2)});"
    return Part(
        "stepped-shaft",
        difficulty,
        "Stepped shaft",
        tuple(features),
        tuple(dims),
        frame,
        program("stepped shaft", scad),
        round_box(diameters[0], z),
        sketch(drawn) if difficulty == "easy" else "",
    )


def tube(rng: random.Random, difficulty: str) -> Part:
    od, length = pick(rng, steps(16, 80, 4)), pick(rng, steps(20, 120, 10))
    wall = pick(rng, [w for w in (2, 3, 4, 5) if w < od / 4])
    idia = od - 2 * wall
    features, dims = ["tube"], [f"Tube Ø{mm(od)} outside, Ø{mm(idia)} inside (wall {mm(wall)}), {mm(length)} long."]
    profile, fd = [(idia / 2, 0), (od / 2, 0), (od / 2, length), (idia / 2, length)], od
    if difficulty != "easy":
        fd, ft = od + pick(rng, steps(10, 30, 5)), pick(rng, (3, 4, 5))
        features.append("end collar")
        dims.append(f"A collar Ø{mm(fd)}, {mm(ft)} thick, at the bottom end (Z 0 to {mm(ft)}).")
        profile = [(idia / 2, 0), (fd / 2, 0), (fd / 2, ft), (od / 2, ft), (od / 2, length), (idia / 2, length)]
    cuts = []
    if difficulty == "hard":
        d, z = pick(rng, steps(3, min(idia * 0.5, 10), 1)), length * 0.6
        features.append("two cross holes")
        dims.append(f"Two radial holes Ø{mm(d)} at Z {mm(z)}: one right through along X, one right through along Y.")
        cuts += [f"  translate({vec(-od, 0, z)}) rotate([0, 90, 0]) cylinder(h = {mm(2 * od)}, d = {mm(d)});",
                 f"  translate({vec(0, -od, z)}) rotate([-90, 0, 0]) cylinder(h = {mm(2 * od)}, d = {mm(d)});"]  # fmt: skip
    body = revolve(profile)
    scad = f"difference() {{\n  {body}\n" + "\n".join(cuts) + "\n}" if cuts else body
    drawn = f"linear_extrude(height = {mm(length)}) difference() {{ circle(d = {mm(od)}); circle(d = {mm(idia)}); }}"
    return Part("tube", difficulty, "Tube", tuple(features), tuple(dims), AXIS_FRAME, program("tube", scad),
                round_box(fd, length), sketch(drawn) if difficulty == "easy" else "")  # fmt: skip


def hex_spacer(rng: random.Random, difficulty: str) -> Part:
    af, length = pick(rng, (8, 10, 13, 17, 19, 22)), pick(rng, steps(8, 40, 2))
    bore = pick(rng, [b for b in (3.2, 4.3, 5.3, 6.4, 8.4) if b < af * 0.6])
    features = ["hex prism", "through bore"]
    dims = [f"Hexagonal spacer {mm(af)} across flats, {mm(length)} long; two flats parallel to the X axis (corners on the X axis).",
            f"Through bore Ø{mm(bore)} on the axis."]  # fmt: skip
    corners = af / math.cos(math.radians(30))  # across corners
    body = f"linear_extrude(height = {mm(length)}) difference() {{ circle(d = {mm(corners)}, $fn = 6); circle(d = {mm(bore)}); }}"
    cuts = []
    if difficulty != "easy":
        cb = round(min(af * 0.8, bore * 1.8), 1)
        depth = round(min(length / 3, 4), 1)
        features.append("counterbore")
        dims.append(f"Counterbore Ø{mm(cb)}, {mm(depth)} deep, in the top face.")
        cuts.append(f"  translate([0, 0, {mm(length - depth)}]) cylinder(h = {mm(depth + 1)}, d = {mm(cb)});")
    if difficulty == "hard":
        features.append("chamfered corners")
        dims.append(f"Both ends chamfered as a nut is: a cone whose surface lies at 30° to the end face, meeting the end face "
                    f"on a Ø{mm(af)} circle, trims the hex corners.")  # fmt: skip
        slope = math.tan(math.radians(30))  # rise per unit of radius
        h = round((corners - af) / 2 * slope + 1, 2)
        wide = af + 2 * h / slope
        turned_profile = revolve(
            [(0, 0), (af / 2, 0), (wide / 2, h), (wide / 2, length - h), (af / 2, length), (0, length)]
        )
        body = f"intersection() {{\n    {body}\n    {turned_profile}\n  }}"
    scad = f"difference() {{\n  {body}\n" + "\n".join(cuts) + "\n}" if cuts else body
    return Part(
        "hex-spacer",
        difficulty,
        "Hexagonal spacer",
        tuple(features),
        tuple(dims),
        AXIS_FRAME,
        program("hex spacer", scad),
        box((-float(mm(corners)) / 2, -af / 2, 0), (float(mm(corners)) / 2, af / 2, length)),  # as written
        sketch(
            f"linear_extrude(height = {mm(length)}) difference() {{ circle(d = {mm(af)} / cos(30), $fn = 6); "
            f"circle(d = {mm(bore)}); }}"
        )
        if difficulty == "easy"
        else "",
    )


def gear_blank(rng: random.Random, difficulty: str) -> Part:
    od, face = pick(rng, steps(50, 120, 5)), pick(rng, (8, 10, 12, 15))
    bore = pick(rng, steps(10, min(24, od * 0.5 - 12), 2))
    hub_d, hub_h = pick(rng, steps(bore + 12, od * 0.5, 2)), pick(rng, (5, 8, 10))
    features = ["rim disc", "hub", "bore"]
    dims = [f"Disc Ø{mm(od)} with a {mm(face)} wide face (Z 0 to {mm(face)}).",
            f"Hub Ø{mm(hub_d)} projecting {mm(hub_h)} above the disc (to Z {mm(face + hub_h)}).", f"Bore Ø{mm(bore)} right through."]  # fmt: skip
    profile = [
        (bore / 2, 0),
        (od / 2, 0),
        (od / 2, face),
        (hub_d / 2, face),
        (hub_d / 2, face + hub_h),
        (bore / 2, face + hub_h),
    ]
    cuts = []
    if difficulty != "easy":
        kw = {10: 3, 12: 4, 14: 5, 16: 5, 18: 6, 20: 6, 22: 6, 24: 8}[int(bore)]
        kd = kw / 2
        features.append("keyway")
        dims.append(f"A keyway {mm(kw)} wide running the full length of the bore, cut {mm(kd)} deep into the bore wall on the +X side "
                    f"(its floor at X {mm(bore / 2 + kd)}).")  # fmt: skip
        cuts.append(f"  translate({vec(0, -kw / 2, -1)}) cube({vec(bore / 2 + kd, kw, face + hub_h + 2)});")
    if difficulty == "hard":
        n, pcd = pick(rng, (4, 5, 6)), (hub_d + od * 0.8) / 2
        d = round(min((od * 0.8 - hub_d) / 2 - 4, pcd * math.sin(math.pi / n) - 4), 0)
        if d >= 6:
            features.append(f"{n} lightening holes")
            dims.append(
                f"{n} lightening holes Ø{mm(d)} through the disc, equally spaced on a Ø{mm(pcd)} circle, the first on +X."
            )
            cuts.append(
                f"  linear_extrude(height = {mm(3 * face)}, center = true) {{\n{circles_2d(bolt_circle(n, pcd), d)}\n  }}"
            )
    scad = f"difference() {{\n  {revolve(profile)}\n" + "\n".join(cuts) + "\n}" if cuts else revolve(profile)
    return Part("gear-blank", difficulty, "Gear blank", tuple(features), tuple(dims), AXIS_FRAME, program("gear blank", scad),
                round_box(od, face + hub_h))  # fmt: skip
