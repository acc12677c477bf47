"""Prismatic part families: plates, brackets, blocks, boxes, channels and hinge leaves.

Each family is `family(rng, difficulty) -> Part`: its dimensions drawn from `rng`, more features
the harder the tier, a description an engineer would write and the reference program.
"""

from __future__ import annotations

import random

from ptrain_cad.parts import (
    Part,
    box,
    circles_2d,
    countersunk_holes,
    mm,
    pick,
    points_text,
    program,
    sketch,
    steps,
    vec,
)

CORNER_FRAME = "Origin at the lower-left corner of the underside; X along the {L} mm length, Y along the {W} mm width, Z up (the part sits on Z = 0)."


def plate_holes(rng: random.Random, difficulty: str) -> Part:
    length, width = pick(rng, steps(80, 160, 10)), pick(rng, steps(50, 100, 10))
    t, d = pick(rng, (4, 5, 6, 8)), pick(rng, (4.5, 5.5, 6.6, 9))
    e = pick(rng, [e for e in (8, 10, 12) if e <= width / 5])
    holes = [(e, e), (length - e, e), (e, width - e), (length - e, width - e)]
    features, dims = ["four corner holes"], [f"Plate {mm(length)} x {mm(width)}, {mm(t)} thick.",
                                             f"Four through holes Ø{mm(d)}, centres {mm(e)} from the two adjacent edges."]  # fmt: skip
    outline = f"square({vec(length, width)});"
    cut = circles_2d(holes, d)
    if difficulty != "easy":
        bore = pick(rng, steps(12, width - 2 * e - d - 6, 2))
        features.append("central bore")
        dims.append(f"Central through hole Ø{mm(bore)} at the plate centre (X {mm(length / 2)}, Y {mm(width / 2)}).")
        cut += "\n" + circles_2d([(length / 2, width / 2)], bore)
    if difficulty == "hard":
        r = pick(rng, (3, 4, 5))
        features += ["rounded corners", "two mid-edge holes"]
        dims.append(f"Vertical corner edges rounded R{mm(r)}.")
        outline = f"offset(r = {mm(r)}) offset(delta = -{mm(r)}) square({vec(length, width)});"
        mids = [(length / 2, e), (length / 2, width - e)]
        dims.append(f"Two more through holes Ø{mm(d)} at {points_text(mids)}.")
        cut += "\n" + circles_2d(mids, d)
    scad = f"linear_extrude(height = {mm(t)})\n  difference() {{\n    {outline}\n{cut}\n  }}"
    L, W, E = mm(length), mm(width), mm(e)  # noqa: N806
    drawn = (f"linear_extrude(height = {mm(t)}) difference() {{ square([{L}, {W}]); "
             f"for (x = [{E}, {L} - {E}], y = [{E}, {W} - {E}]) translate([x, y]) circle(d = {mm(d)}); }}")  # fmt: skip
    return Part("plate-holes", difficulty, "Mounting plate with a hole pattern", tuple(features), tuple(dims),
                CORNER_FRAME.format(L=mm(length), W=mm(width)), program("mounting plate", scad),
                box((0, 0, 0), (length, width, t)), sketch(drawn) if difficulty == "easy" else "")  # fmt: skip


def l_bracket(rng: random.Random, difficulty: str) -> Part:
    base, height, width = pick(rng, steps(40, 100, 10)), pick(rng, steps(30, 80, 10)), pick(rng, steps(20, 60, 5))
    t, d = pick(rng, (3, 4, 5, 6, 8)), pick(rng, (4.5, 5.5, 6.6))
    leg = round(min(base, height) * 0.4) if difficulty == "hard" else 0
    features, dims = (
        ["L profile"],
        [
            f"Base leg {mm(base)} long (X), upright leg {mm(height)} tall (Z), both {mm(width)} wide (Y) and {mm(t)} thick.",
            "The upright leg stands at the X = 0 end of the base leg, its outer face on X = 0.",
        ],
    )
    profile = (
        f"polygon([{vec(0, 0)}, {vec(base, 0)}, {vec(base, t)}, {vec(t, t)}, {vec(t, height)}, {vec(0, height)}]);"
    )
    body = f"translate([0, {mm(width)}, 0]) rotate([90, 0, 0])\n    linear_extrude(height = {mm(width)}) {profile}"
    cuts = []
    if difficulty != "easy":
        xs = [t + leg + (base - t - leg) * f for f in (0.3, 0.75)]
        features.append("two holes in the base leg")
        dims.append(
            f"Two vertical through holes Ø{mm(d)} in the base leg at {points_text([(x, width / 2) for x in xs])}."
        )
        cuts += [f"  translate({vec(x, width / 2, -1)}) cylinder(h = {mm(t + 2)}, d = {mm(d)});" for x in xs]
    if difficulty == "hard":
        z = t + leg + (height - t - leg) / 2
        features += ["gusset", "hole in the upright leg"]
        dims.append(f"A triangular gusset {mm(t)} thick, centred across the width (Y {mm((width - t) / 2)} to {mm((width + t) / 2)}), "
                    f"filling the inside corner with legs {mm(leg)} along X and Z from the inner faces.")  # fmt: skip
        dims.append(
            f"One horizontal through hole Ø{mm(d)} in the upright leg, along X, centred at Y {mm(width / 2)}, Z {mm(z)}."
        )
        cuts.append(f"  translate({vec(-1, width / 2, z)}) rotate([0, 90, 0]) cylinder(h = {mm(t + 2)}, d = {mm(d)});")
        gusset = (f"  translate([0, {mm((width + t) / 2)}, 0]) rotate([90, 0, 0]) linear_extrude(height = {mm(t)})\n"
                  f"    polygon([{vec(t - 0.01, t - 0.01)}, {vec(t + leg, t - 0.01)}, {vec(t - 0.01, t + leg)}]);")  # fmt: skip
        body = f"union() {{\n  {body};\n{gusset}\n}}"
    scad = f"difference() {{\n  {body};\n" + "\n".join(cuts) + "\n}" if cuts else f"{body};"
    frame = "Origin at the outer heel of the L (bottom of the base leg, back of the upright); X along the base leg, Y across the width, Z up the upright leg."
    return Part("l-bracket", difficulty, "L-bracket", tuple(features), tuple(dims), frame, program("L-bracket", scad),
                box((0, 0, 0), (base, width, height)))  # fmt: skip


def box_lid_lip(rng: random.Random, difficulty: str) -> Part:
    length, width, height = pick(rng, steps(50, 120, 10)), pick(rng, steps(40, 90, 10)), pick(rng, steps(25, 60, 5))
    wall, floor = pick(rng, (2, 2.5, 3)), pick(rng, (2, 3, 4))
    r = pick(rng, (4, 5, 6)) if difficulty == "hard" else 0
    features, dims = ["open box"], [f"Outside {mm(length)} x {mm(width)} x {mm(height)} high, open at the top.",
                                    f"Walls {mm(wall)} thick, floor {mm(floor)} thick."]  # fmt: skip

    def outline(inset: float) -> str:
        if not r:
            return f"translate({vec(inset, inset)}) square({vec(length - 2 * inset, width - 2 * inset)});"
        return f"offset(r = {mm(max(r - inset, 0.5))}) offset(delta = -{mm(max(r - inset, 0.5))}) translate({vec(inset, inset)}) square({vec(length - 2 * inset, width - 2 * inset)});"

    parts = [f"  linear_extrude(height = {mm(height)}) {outline(0)}",
             f"  translate([0, 0, {mm(floor)}]) linear_extrude(height = {mm(height)}) {outline(wall)}"]  # fmt: skip
    if r:
        features.append("rounded corners")
        dims.append(
            f"Vertical outside corners rounded R{mm(r)}; the inside corners follow at R{mm(max(r - wall, 0.5))}."
        )
    if difficulty != "easy":
        lip = pick(rng, (3, 4, 5))
        features.append("lid lip")
        dims.append(f"Lid lip: the top {mm(lip)} of the walls is cut back on the outside to half the wall thickness "
                    f"({mm(wall / 2)}), so the outside there is {mm(length - wall)} x {mm(width - wall)}.")  # fmt: skip
        ring = f"difference() {{ offset(delta = 1) {outline(0)} {outline(wall / 2)} }}"
        parts.append(f"  translate([0, 0, {mm(height - lip)}]) linear_extrude(height = {mm(lip + 1)}) {ring}")
    scad = "difference() {\n" + "\n".join(parts) + "\n}"
    return Part("box-lid-lip", difficulty, "Open box with a lid lip", tuple(features), tuple(dims),
                CORNER_FRAME.format(L=mm(length), W=mm(width)), program("box", scad),
                box((0, 0, 0), (length, width, height)))  # fmt: skip


def hinge_leaf(rng: random.Random, difficulty: str) -> Part:
    n = 3 if difficulty != "hard" else 5
    length, width, t = pick(rng, steps(30, 90, 15)), pick(rng, steps(20, 40, 5)), pick(rng, (2, 2.5, 3))
    knuckle, pin = t * 2 + 1, pick(rng, (2, 2.5, 3))
    seg = length / n
    features = ["leaf", f"{(n + 1) // 2} knuckles with a pin hole"]
    dims = [f"Leaf {mm(length)} long (X) x {mm(width)} wide (Y) x {mm(t)} thick, from Y = 0 to Y = {mm(width)}.",
            f"Along the Y = 0 edge, a knuckle barrel Ø{mm(knuckle)} with its axis along X at Y = 0, Z = {mm(knuckle / 2)}, "
            f"split into {n} equal segments of {mm(seg)}; this leaf keeps segments 1, 3{', 5' if n == 5 else ''} "
            f"(the others are gaps for the mating leaf).",
            f"Pin hole Ø{mm(pin)} through the knuckles on the barrel axis."]  # fmt: skip
    barrels = "\n".join(
        f"    translate({vec(i * seg, 0, knuckle / 2)}) rotate([0, 90, 0]) cylinder(h = {mm(seg)}, d = {mm(knuckle)});"
        for i in range(0, n, 2)
    )
    leaf = f"    translate([0, 0, 0]) cube({vec(length, width, t)});"
    cuts = [
        f"  translate({vec(i * seg - 0.5, 0, knuckle / 2)}) rotate([0, 90, 0]) cylinder(h = {mm(seg + 1)}, d = {mm(pin)});"
        for i in range(0, n, 2)
    ]
    if difficulty != "easy":
        d, head = pick(rng, (3.4, 4.5)), 0.0
        xs = [length * f for f in ((0.25, 0.75) if n == 3 else (0.2, 0.5, 0.8))]
        holes = [(x, knuckle / 2 + (width - knuckle / 2) / 2 + 1) for x in xs]
        features.append(f"{len(holes)} screw holes")
        dims.append(f"{len(holes)} through holes Ø{mm(d)} at {points_text(holes)}.")
        if difficulty == "hard":
            head = d + t
            features.append("countersinks")
            dims.append(f"The screw holes are countersunk 90° on the top face (Z = {mm(t)}) to Ø{mm(head)}.")
            cuts.append(countersunk_holes(holes, d, head, t))
        else:
            cuts.append(f"  linear_extrude(height = {mm(3 * t)}, center = true) {{\n{circles_2d(holes, d)}\n  }}")
    scad = "difference() {\n  union() {\n" + leaf + "\n" + barrels + "\n  }\n" + "\n".join(cuts) + "\n}"
    frame = "Origin on the knuckle edge of the leaf at its underside, X along the hinge axis direction, Y across the leaf, Z up."
    return Part("hinge-leaf", difficulty, "Hinge leaf", tuple(features), tuple(dims), frame, program("hinge leaf", scad),
                box((0, -knuckle / 2, 0), (length, width, knuckle)))  # fmt: skip


def countersunk_plate(rng: random.Random, difficulty: str) -> Part:
    length, width, t = pick(rng, steps(60, 140, 10)), pick(rng, steps(30, 70, 10)), pick(rng, (5, 6, 8))
    d = pick(rng, (3.4, 4.5, 5.5))
    head, e = 2 * d, pick(rng, (8, 10))
    if difficulty == "easy":
        holes = [(e, width / 2), (length - e, width / 2)]
    elif difficulty == "medium":
        holes = [(e, e), (length - e, e), (e, width - e), (length - e, width - e)]
    else:
        holes = [(x, y) for x in (e, length / 2, length - e) for y in (e, width - e)]
    features = (
        ["plate", "countersunk holes"]
        + ["second row"] * (difficulty != "easy")
        + ["middle column"] * (difficulty == "hard")
    )
    dims = [f"Plate {mm(length)} x {mm(width)}, {mm(t)} thick.",
            f"{len(holes)} through holes Ø{mm(d)} at {points_text(holes)}, each countersunk 90° to Ø{mm(head)} on the top face (Z = {mm(t)})."]  # fmt: skip
    cut = countersunk_holes(holes, d, head, t)
    if difficulty == "hard":
        slot = pick(rng, (8, 10))
        features.append("relief slot")
        dims.append(
            f"A {mm(slot)} wide, {mm(t / 2)} deep relief groove across the full width on the underside, centred at X {mm((e + length / 2) / 2)}."
        )
        cut += f"\n  translate({vec((e + length / 2) / 2 - slot / 2, -1, -1)}) cube({vec(slot, width + 2, t / 2 + 1)});"
    scad = f"difference() {{\n  cube({vec(length, width, t)});\n{cut}\n}}"
    return Part("countersunk-plate", difficulty, "Plate with countersunk holes", tuple(features), tuple(dims),
                CORNER_FRAME.format(L=mm(length), W=mm(width)), program("countersunk plate", scad),
                box((0, 0, 0), (length, width, t)))  # fmt: skip


def chamfered_block(rng: random.Random, difficulty: str) -> Part:
    width, height = pick(rng, steps(20, 60, 5)), pick(rng, steps(10, 40, 5))
    length = pick(rng, steps(width, min(2 * width, 90), 5))
    c = round((0.035 * length * width) ** 0.5)  # the chamfers take at least 7% of the plan area
    features = ["block", "chamfered vertical edges"]
    dims = [
        f"Block {mm(length)} x {mm(width)} x {mm(height)} high.",
        f"The four vertical edges chamfered {mm(c)} x 45°.",
    ]
    profile = f"polygon([{vec(c, 0)}, {vec(length - c, 0)}, {vec(length, c)}, {vec(length, width - c)}, {vec(length - c, width)}, {vec(c, width)}, {vec(0, width - c)}, {vec(0, c)}])"
    body = f"linear_extrude(height = {mm(height)}) {profile};"
    if difficulty != "easy":
        top = pick(rng, (1.5, 2, 3))
        features.append("chamfered top edges")
        dims.append(f"All top edges chamfered {mm(top)} x 45° (the top face is inset {mm(top)} all round).")
        body = (f"hull() {{\n    linear_extrude(height = {mm(height - top)}) {profile};\n"
                f"    linear_extrude(height = {mm(height)}) offset(delta = -{mm(top)}) {profile};\n  }}")  # fmt: skip
    if difficulty == "hard":
        hole = pick(rng, steps(6, min(length, width) / 2, 2))
        features.append("central through hole")
        dims.append(f"Vertical through hole Ø{mm(hole)} at the centre (X {mm(length / 2)}, Y {mm(width / 2)}).")
        body = f"difference() {{\n  {body}\n  translate({vec(length / 2, width / 2, -1)}) cylinder(h = {mm(height + 2)}, d = {mm(hole)});\n}}"
    L, W, C = mm(length), mm(width), mm(c)  # noqa: N806
    drawn = (f"linear_extrude(height = {mm(height)}) polygon([[{C}, 0], [{L} - {C}, 0], [{L}, {C}], [{L}, {W} - {C}], "
             f"[{L} - {C}, {W}], [{C}, {W}], [0, {W} - {C}], [0, {C}]]);")  # fmt: skip
    return Part("chamfered-block", difficulty, "Chamfered block", tuple(features), tuple(dims),
                CORNER_FRAME.format(L=mm(length), W=mm(width)), program("chamfered block", body),
                box((0, 0, 0), (length, width, height)), sketch(drawn) if difficulty == "easy" else "")  # fmt: skip


def filleted_block(rng: random.Random, difficulty: str) -> Part:
    width, height = pick(rng, steps(30, 70, 10)), pick(rng, steps(12, 30, 2))
    length = pick(rng, steps(width, min(2 * width, 100), 10))
    r = round(0.2 * (length * width) ** 0.5)  # the fillets take at least 3% of the plan area
    features = ["block", "filleted vertical edges"]
    dims = [f"Block {mm(length)} x {mm(width)} x {mm(height)} high.", f"The four vertical edges filleted R{mm(r)}."]
    outline = f"offset(r = {mm(r)}) offset(delta = -{mm(r)}) square({vec(length, width)})"
    cuts = []
    if difficulty != "easy":
        depth, wall = pick(rng, steps(4, height - 4, 2)), pick(rng, (5, 6, 8))
        pr = max(r - wall, 2)
        features.append("rounded pocket")
        dims.append(f"A pocket {mm(depth)} deep from the top, leaving {mm(wall)} walls all round "
                    f"({mm(length - 2 * wall)} x {mm(width - 2 * wall)}), its vertical corners R{mm(pr)}.")  # fmt: skip
        cuts.append(f"  translate({vec(wall, wall, height - depth)}) linear_extrude(height = {mm(depth + 1)})\n"
                    f"    offset(r = {mm(pr)}) offset(delta = -{mm(pr)}) square({vec(length - 2 * wall, width - 2 * wall)});")  # fmt: skip
        if difficulty == "hard":
            d = pick(rng, (4.5, 5.5))
            holes = [(x, width / 2) for x in (length * 0.3, length * 0.7)]
            features.append("two holes in the pocket floor")
            dims.append(f"Two through holes Ø{mm(d)} in the pocket floor at {points_text(holes)}.")
            cuts.append(f"  linear_extrude(height = {mm(3 * height)}, center = true) {{\n{circles_2d(holes, d)}\n  }}")
    body = f"linear_extrude(height = {mm(height)}) {outline};"
    scad = f"difference() {{\n  {body}\n" + "\n".join(cuts) + "\n}" if cuts else body
    return Part("filleted-block", difficulty, "Filleted block", tuple(features), tuple(dims),
                CORNER_FRAME.format(L=mm(length), W=mm(width)), program("filleted block", scad),
                box((0, 0, 0), (length, width, height)), sketch(body) if difficulty == "easy" else "")  # fmt: skip


def slot_pocket(rng: random.Random, difficulty: str) -> Part:
    length, width, height = pick(rng, steps(60, 140, 10)), pick(rng, steps(30, 70, 10)), pick(rng, steps(10, 25, 5))
    s = pick(rng, [s for s in (6, 8, 10) if s <= width / 3 - 3])
    slot_len = pick(rng, steps(20, length / 2, 5))
    y1 = width / 2 if difficulty != "hard" else width / 3
    x0 = length * 0.3 - slot_len / 2
    features = ["block", "through slot"]
    dims = [f"Block {mm(length)} x {mm(width)} x {mm(height)} high.",
            f"A through slot {mm(s)} wide with round ends, running along X, its end-centres at {points_text([(x0 + s / 2, y1), (x0 + slot_len - s / 2, y1)])} ({mm(slot_len)} long overall)."]  # fmt: skip

    def slot(y: float) -> str:
        return (f"  linear_extrude(height = {mm(3 * height)}, center = true) hull() {{\n"
                f"    translate({vec(x0 + s / 2, y)}) circle(d = {mm(s)});\n    translate({vec(x0 + slot_len - s / 2, y)}) circle(d = {mm(s)});\n  }}")  # fmt: skip

    cuts = [slot(y1)]
    if difficulty != "easy":
        pl, pw, pd = (
            pick(rng, steps(15, length * 0.3, 5)),
            pick(rng, steps(10, width - 10, 5)),
            pick(rng, steps(3, height - 3, 1)),
        )
        px = length * 0.75 - pl / 2
        features.append("rectangular pocket")
        dims.append(f"A rectangular pocket {mm(pl)} x {mm(pw)}, {mm(pd)} deep from the top, spanning X {mm(px)} to {mm(px + pl)} "
                    f"and Y {mm((width - pw) / 2)} to {mm((width + pw) / 2)}.")  # fmt: skip
        cuts.append(f"  translate({vec(px, (width - pw) / 2, height - pd)}) cube({vec(pl, pw, pd + 1)});")
    if difficulty == "hard":
        y2 = 2 * width / 3
        features.append("second slot")
        dims.append(f"A second identical slot at Y {mm(y2)} (same X positions).")
        cuts.append(slot(y2))
    scad = f"difference() {{\n  cube({vec(length, width, height)});\n" + "\n".join(cuts) + "\n}"
    return Part("slot-pocket", difficulty, "Block with slots and a pocket", tuple(features), tuple(dims),
                CORNER_FRAME.format(L=mm(length), W=mm(width)), program("slotted block", scad),
                box((0, 0, 0), (length, width, height)))  # fmt: skip


def u_channel(rng: random.Random, difficulty: str) -> Part:
    length, width, height, t = (
        pick(rng, steps(40, 120, 10)),
        pick(rng, steps(20, 50, 5)),
        pick(rng, steps(15, 40, 5)),
        pick(rng, (2, 3, 4)),
    )
    features = ["U channel"]
    dims = [f"U channel {mm(length)} long (X), {mm(width)} wide outside (Y) and {mm(height)} high (Z), material {mm(t)} thick.",
            "Open at the top: a base web on Z = 0 and two side flanges on Y = 0 and Y = width."]  # fmt: skip
    profile = (
        f"difference() {{ square({vec(width, height)}); translate({vec(t, t)}) square({vec(width - 2 * t, height)}); }}"
    )
    body = f"rotate([90, 0, 90]) linear_extrude(height = {mm(length)}) {profile};"
    cuts = []
    d = pick(rng, (4.5, 5.5))
    if difficulty != "easy":
        xs = [length * f for f in (0.25, 0.5, 0.75)]
        features.append("holes in the web")
        dims.append(
            f"Three vertical through holes Ø{mm(d)} in the web on the centreline Y {mm(width / 2)}, at X {', '.join(mm(x) for x in xs)}."
        )
        cuts.append(
            f"  linear_extrude(height = {mm(3 * t)}, center = true) {{\n{circles_2d([(x, width / 2) for x in xs], d)}\n  }}"
        )
    if difficulty == "hard":
        z, xs = t + (height - t) / 2, [length * 0.25, length * 0.75]
        features.append("cross holes through both flanges")
        dims.append(
            f"Two horizontal through holes Ø{mm(d)} along Y through both flanges, at Z {mm(z)} and X {', '.join(mm(x) for x in xs)}."
        )
        cuts += [
            f"  translate({vec(x, -1, z)}) rotate([-90, 0, 0]) cylinder(h = {mm(width + 2)}, d = {mm(d)});" for x in xs
        ]
    scad = f"difference() {{\n  {body}\n" + "\n".join(cuts) + "\n}" if cuts else body
    frame = "Origin at the outer bottom corner at the start of the channel; X along the channel, Y across it, Z up."
    return Part(
        "u-channel",
        difficulty,
        "U channel",
        tuple(features),
        tuple(dims),
        frame,
        program("U channel", scad),
        box((0, 0, 0), (length, width, height)),
        sketch(
            f"rotate([90, 0, 90]) linear_extrude(height = {mm(length)}) difference() {{ square([{mm(width)}, {mm(height)}]); "
            f"translate([{mm(t)}, {mm(t)}]) square([{mm(width)} - 2 * {mm(t)}, {mm(height)}]); }}"
        )
        if difficulty == "easy"
        else "",
    )
