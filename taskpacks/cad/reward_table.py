"""Measure the CAD reward in real sandboxes: for one task of each family and tier, what gold, the
bounding-box cuboid probe and the part without its features (every `difference` keeps only its
first child) score under the old rule (the IoU once the gates pass) and the new one; and, for a
few families, one feature misplaced against the same feature left out.

    .venv/bin/python taskpacks/cad/reward_table.py [--out metrics.json] [--tiers easy,medium,hard]

Prints markdown tables (the ones in docs/cad_reward.md); --out keeps every measurement.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
from collections.abc import Callable

from ptrain_cad import TASKPACK
from ptrain_cad.generator import FAMILIES, PART_FILE
from ptrain_cad.probes import bbox_cuboid
from ptrain_cad.verifier import judge

from ptrain.sandbox import PoolSet, images
from ptrain.taskpack import Task, ToolCall
from ptrain.verify import replay, verify_artifact

NO_FEATURES = "module difference() children(0);  // every difference keeps only its first child\n"


def old_reward(metrics: dict) -> float:
    """cad/0.1.0: the IoU once the part is valid, has the right bodies and clears the bounding-box gate."""
    verdict = judge(metrics)
    gated = verdict.details.get("checks") is not None
    return round(min(max(metrics["iou"], 0.0), 1.0), 6) if gated else 0.0


def edit_line(pattern: str, change: Callable[[str], str | None]) -> Callable[[str], str]:
    """A scad edit: the first line matching `pattern` changed (None deletes it)."""

    def edit(scad: str) -> str:
        lines = scad.splitlines()
        i = next(i for i, line in enumerate(lines) if re.search(pattern, line))
        new = change(lines[i])
        lines[i : i + 1] = [] if new is None else [new]
        return "\n".join(lines) + "\n"

    return edit


def shift(dx: float, dy: float = 0.0, dz: float = 0.0) -> Callable[[str], str]:
    return lambda line: re.sub(r"^(\s*)", lambda m: f"{m.group(1)}translate([{dx:g}, {dy:g}, {dz:g}]) ", line, count=1)


def number(line: str, name: str) -> float:
    return float(re.search(rf"{name} = ([\d.]+)", line).group(1))


# family, tier, the feature's line, how to misplace it (moved inside the part, genus unchanged)
MISPLACED: list[tuple[str, str, str, Callable[[str], str]]] = [
    ("plate-holes", "easy", r"circle\(d", lambda line: re.sub(r"translate\(\[[^]]*\]\)", "translate([40, 25])", line)),
    ("countersunk-plate", "easy", r"rotate_extrude", lambda line: re.sub(r"translate\(\[[^]]*\]\)", "translate([30, 15, 0])", line)),
    ("flange", "easy", r"circle\(d", shift(6.5)),  # outward on the +X axis, clear of its neighbours
    ("chamfered-block", "hard", r"cylinder", lambda line: shift(1.5 * number(line, "d"))(line)),
    ("slot-pocket", "medium", r"translate.*cube\(", shift(5)),
    ("filleted-block", "medium", r"linear_extrude\(height = [\d.]+\)$", shift(3)),
    ("stepped-shaft", "hard", r"rotate\(\[-90", shift(0, 0, 5)),  # the cross hole, 5 mm higher
    ("gear-blank", "medium", r"cube\(", lambda line: f"  mirror([1, 0, 0]) {line.strip()}"),
    ("hex-spacer", "medium", r"cylinder", lambda line: shift(number(line, "d") / 4)(line)),
]  # fmt: skip


def first_of(family: str, tier: str) -> Task:
    return next(t for t in TASKPACK.all_tasks if t.category == family and t.difficulty == tier)


def program_calls(scad: str) -> tuple[ToolCall, ...]:
    return (
        ToolCall("str_replace_editor", {"command": "create", "path": PART_FILE, "file_text": scad}),
        ToolCall("submit", {"file": PART_FILE}),
    )


async def measure(pools: PoolSet, task: Task, name: str, calls, gate: asyncio.Semaphore) -> dict:
    async with gate:
        started = time.monotonic()
        verdict = await verify_artifact(TASKPACK, task, await replay(TASKPACK, task, calls, pools), pools)
    details = verdict.details
    old = old_reward(details) if "submission" in details else 0.0
    return {"task": task.id, "family": task.category, "tier": task.difficulty, "variant": name,
            "new": verdict.reward, "old": old, "passed": verdict.passed, "reason": details.get("reason"),
            "seconds": round(time.monotonic() - started, 1),
            "metrics": {k: details[k] for k in ("submission", "reference", "expected_bodies", "iou", "chamfer_mm",
                                                "hausdorff95_mm", "hausdorff_max_mm") if k in details}}  # fmt: skip


def jobs(tiers: list[str]) -> list[tuple[Task, str, tuple[ToolCall, ...]]]:
    out = []
    for family in FAMILIES:
        for tier in filter(None, tiers):
            t = first_of(family, tier)
            scad = t.metadata["reference_scad"]
            out += [(t, "gold", TASKPACK.gold(t)), (t, "bbox-cuboid", bbox_cuboid(t).calls)]
            if "difference" in scad:  # features cut out of a body; without one, no-features is gold
                out.append((t, "no-features", program_calls(NO_FEATURES + scad)))
    for family, tier, pattern, move in MISPLACED:
        t = first_of(family, tier)
        scad = t.metadata["reference_scad"]
        out += [(t, "misplaced", program_calls(edit_line(pattern, move)(scad))),
                (t, "left-out", program_calls(edit_line(pattern, lambda line: None)(scad)))]  # fmt: skip
    return out


def table(rows: list[dict]) -> str:
    cell = {(r["task"], r["variant"]): r for r in rows}
    lines = [
        "| task | gold (new) | cuboid old | cuboid new | no-features old | no-features new |",
        "|---|---|---|---|---|---|",
    ]
    for task_id in dict.fromkeys(r["task"] for r in rows if r["variant"] == "gold"):
        g, c, n = (cell.get((task_id, v)) for v in ("gold", "bbox-cuboid", "no-features"))
        bare = "= gold (no `difference`) | |" if n is None else f"{n['old']:.3f} | {n['new']:.3f} |"
        lines.append(f"| {task_id} | {g['new']:.2f} | {c['old']:.3f} | {c['new']:.3f} | {bare}")
    lines += ["", "| task | misplaced old | left out old | misplaced new | left out new |", "|---|---|---|---|---|"]
    for task_id in dict.fromkeys(r["task"] for r in rows if r["variant"] == "misplaced"):
        m, o = cell[(task_id, "misplaced")], cell[(task_id, "left-out")]
        lines.append(f"| {task_id} | {m['old']:.3f} | {o['old']:.3f} | {m['new']:.3f} | {o['new']:.3f} |")
    return "\n".join(lines)


async def main(tiers: list[str], out: str | None, concurrency: int) -> None:
    images.build_taskpack(TASKPACK.image)
    gate = asyncio.Semaphore(concurrency)
    async with PoolSet(size=2, max_active=2 * concurrency + 2) as pools:
        rows = await asyncio.gather(*(measure(pools, t, name, calls, gate) for t, name, calls in jobs(tiers)))
    if out:
        with open(out, "w") as f:
            json.dump(rows, f, indent=1)
    print(table(rows))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--tiers", default="easy,medium,hard")
    parser.add_argument("--out")
    parser.add_argument("--concurrency", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.tiers.split(","), args.out, args.concurrency))
