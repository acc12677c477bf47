"""cadtool: render OpenSCAD programs and measure solids, inside the CAD sandbox.

Shipped in the image at /opt/ptrain-cad/ with geometry.py, and run by the taskpack's tools and
verifier through `sandbox.exec`:

    cadtool.py render FILE [--json]           render to STL; errors, warnings, watertight, volume, bbox, bodies
    cadtool.py views FILE                     top, front and side height maps as character grids
    cadtool.py compare SUB.stl REF [--bodies N] [--align]
                                              JSON metrics of a rendered submission against a reference
                                              (REF is .scad, rendered here, or .stl)

OpenSCAD runs under `timeout`, so a program that never finishes is an error, not a hang. Solids
are loaded with trimesh (vertices merged) and measured with manifold3d (volume, bodies, booleans).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import geometry  # noqa: E402

CACHE = Path("/tmp/ptrain-cad")
RENDER_TIMEOUT_S = float(os.environ.get("PTRAIN_CAD_RENDER_TIMEOUT_S", "120"))
MAX_MESSAGES = 20


def render(scad: Path, timeout_s: float = RENDER_TIMEOUT_S) -> dict:
    """Run OpenSCAD on `scad`; the STL goes to a cache keyed by its content and the .scad files beside it."""
    scad = scad.resolve()
    if not scad.is_file():
        return {"ok": False, "error": f"no such file: {scad}", "errors": [], "warnings": []}
    key = hashlib.sha256(scad.read_bytes())  # by content, so the same program is rendered once
    for other in sorted(scad.parent.rglob("*.scad")):
        if other != scad:  # files it may include
            key.update(str(other.relative_to(scad.parent)).encode() + b"\0" + other.read_bytes())
    CACHE.mkdir(parents=True, exist_ok=True)
    stl, log = CACHE / f"{key.hexdigest()[:16]}.stl", CACHE / f"{key.hexdigest()[:16]}.log.json"
    if log.exists():
        return {**json.loads(log.read_text()), "cached": True}
    started = time.monotonic()
    try:
        done = subprocess.run(
            ["timeout", "-k", "5", str(timeout_s), "openscad", "-o", str(stl), str(scad)],
            capture_output=True, text=True, cwd=scad.parent,
        )  # fmt: skip
        output, code = done.stderr + done.stdout, done.returncode
    except OSError as e:
        output, code = str(e), 127
    lines = [line.strip() for line in output.splitlines()]
    result = {
        "seconds": round(time.monotonic() - started, 2),
        "errors": [line for line in lines if line.startswith("ERROR")][:MAX_MESSAGES],
        "warnings": [line for line in lines if line.startswith("WARNING")][:MAX_MESSAGES],
        "stl": str(stl),
    }
    if code in (124, 137):
        result.update(ok=False, error=f"OpenSCAD did not finish within {timeout_s:g} s")
    elif code != 0 or not stl.exists():
        reason = result["errors"] or [line for line in lines if "top level object" in line.lower()] or lines[-3:]
        result.update(ok=False, error=f"OpenSCAD exited {code}, no solid: {' / '.join(reason)[:600]}")
    else:
        result["ok"] = True
    if code not in (124, 137):
        log.write_text(json.dumps(result))
    return result


def load(stl: Path):
    """(vertices, faces, facts) of an STL: watertight, bodies, volume, bbox; `problem` says what is wrong."""
    import manifold3d
    import trimesh

    try:
        mesh = trimesh.load(str(stl), file_type="stl", force="mesh")
    except Exception as e:  # an empty or corrupt file
        return None, None, {"valid": False, "problem": f"could not read the STL: {type(e).__name__}: {e}"}
    vertices, faces = np.asarray(mesh.vertices, dtype=np.float64), np.asarray(mesh.faces, dtype=np.int64)
    if len(faces) == 0:
        return None, None, {"valid": False, "problem": "the solid is empty"}
    facts = {"triangles": len(faces), "watertight": bool(mesh.is_watertight)}
    facts["bbox_min"], facts["bbox_max"] = geometry.bbox(vertices)
    solid = as_manifold(vertices, faces)
    status = solid.status()
    if not facts["watertight"] or status != manifold3d.Error.NoError:
        facts.update(valid=False, problem=f"not a closed 2-manifold solid ({status.name}; open or shared edges)")
        return vertices, faces, facts
    facts.update(
        volume_mm3=solid.volume(), bodies=len(solid.decompose()), genus=solid.genus(), surface_mm2=solid.surface_area()
    )
    if facts["volume_mm3"] <= 0:
        facts.update(valid=False, problem="the solid has no volume (faces point inward?)")
    else:
        facts.update(valid=True, problem="")
    return vertices, faces, facts


def as_manifold(vertices: np.ndarray, faces: np.ndarray):
    import manifold3d

    mesh = manifold3d.Mesh(vert_properties=vertices.astype(np.float32), tri_verts=faces.astype(np.uint32))
    return manifold3d.Manifold(mesh)


def iou(a, b) -> float:
    union = (a + b).volume()
    return (a ^ b).volume() / union if union > 0 else 0.0


def describe(path: Path, rendered: dict, facts: dict) -> str:
    lines = [
        f"Rendered {path} in {rendered['seconds']:g} s."
        if rendered.get("ok")
        else f"Render failed: {rendered.get('error')}"
    ]
    for kind in ("errors", "warnings"):
        for message in rendered.get(kind, []):
            lines.append(f"  {message}")
    if not rendered.get("ok"):
        return "\n".join(lines)
    if not facts.get("valid"):
        lines.append(f"INVALID SOLID: {facts['problem']}.")
    else:
        lines.append("Valid solid: closed and watertight (2-manifold).")
        lines.append(
            f"Bodies: {facts['bodies']} separate solid{'s' if facts['bodies'] != 1 else ''}; "
            f"through-holes (genus): {facts['genus']}"
        )
        lines.append(f"Volume: {facts['volume_mm3']:.1f} mm^3   Surface: {facts['surface_mm2']:.1f} mm^2")
    if "bbox_min" in facts:
        lo, hi = facts["bbox_min"], facts["bbox_max"]
        for i, axis in enumerate("XYZ"):
            lines.append(f"{axis}: {lo[i]:.2f} .. {hi[i]:.2f}  (size {hi[i] - lo[i]:.2f} mm)")
        lines.append(f"Triangles: {facts['triangles']}")
    return "\n".join(lines)


def nice_cell(extent: float, max_cells: int) -> float:
    for step in (0.1, 0.2, 0.25, 0.5, 1, 2, 2.5, 5, 10, 20, 25, 50, 100, 200, 500):
        if extent / step <= max_cells:
            return step
    return extent / max_cells


def views(vertices: np.ndarray, faces: np.ndarray, max_cells: int = 48) -> str:
    lo, hi = geometry.bbox(vertices)
    cell = nice_cell(max(top - bottom for top, bottom in zip(hi, lo, strict=True)), max_cells)
    out = []
    titles = {"top": "TOP view, from +Z looking down", "front": "FRONT view, from -Y", "side": "SIDE view, from +X"}
    for view in ("top", "front", "side"):
        grid, info = geometry.height_map(vertices, faces, view, cell)
        near, far = info["near"], info["far"]
        lines = geometry.draw(grid, near, far)
        depth = info["depth_axis"]
        out.append(
            f"{titles[view]}: {info['right']} to the right, {info['up']} up; one character = {cell:g} mm; "
            f"lower-left corner at {info['right']}={info['origin'][0]:.1f}, {info['up']}={info['origin'][1]:.1f}.\n"
            f"Digits: how near the surface is to you along {depth}: 9 = {depth} {near * info['sign'] + 0:.1f}, "
            f"0 = {depth} {far * info['sign'] + 0:.1f}; blank = nothing there (see-through)."
        )
        width = info["cols"]
        out.append("+" + "-" * width + "+")
        out.extend("|" + line.ljust(width) + "|" for line in lines)
        out.append("+" + "-" * width + "+")
    return "\n".join(out)


def compare(sub_stl: Path, ref: Path, bodies: int | None, do_align: bool, samples: int) -> dict:
    out: dict = {}
    if ref.suffix == ".scad":
        rendered = render(ref)
        if not rendered["ok"]:
            return {"error": f"the reference did not render: {rendered.get('error')}"}
        ref = Path(rendered["stl"])
    rv, rf, ref_facts = load(ref)
    if not ref_facts.get("valid"):
        return {"error": f"the reference is not a valid solid: {ref_facts.get('problem')}"}
    sv, sf, sub_facts = load(sub_stl)
    out["reference"] = {k: ref_facts[k] for k in ("volume_mm3", "bodies", "genus", "bbox_min", "bbox_max")}
    out["expected_bodies"] = bodies if bodies is not None else ref_facts["bodies"]
    out["submission"] = {k: v for k, v in sub_facts.items() if k != "surface_mm2"}
    if not sub_facts.get("valid"):
        return out
    ref_solid, sub_solid = as_manifold(rv, rf), as_manifold(sv, sf)
    out["iou"] = iou(sub_solid, ref_solid)
    out["aligned"] = False
    if do_align:
        moving = geometry.sample_surface(sv, sf, 1500, seed=3)
        fixed = geometry.sample_surface(rv, rf, 1500, seed=4)
        r, t, rms = geometry.align(moving, fixed, (rv, rf))
        moved = sv @ r.T + t
        moved_iou = iou(as_manifold(moved, sf), ref_solid)
        out["alignment"] = {"mean_distance_mm": rms, "iou_as_placed": out["iou"], "iou_aligned": moved_iou,
                            "rotation": r.round(6).tolist(), "translation": t.round(6).tolist()}  # fmt: skip
        if moved_iou > out["iou"]:
            sv, out["iou"], out["aligned"] = moved, moved_iou, True
            out["submission"]["bbox_min"], out["submission"]["bbox_max"] = geometry.bbox(sv)
    out.update(geometry.surface_metrics((sv, sf), (rv, rf), n=samples))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cadtool")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("render")
    p.add_argument("file", type=Path)
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("views")
    p.add_argument("file", type=Path)
    p = sub.add_parser("compare")
    p.add_argument("submission", type=Path)
    p.add_argument("reference", type=Path)
    p.add_argument("--bodies", type=int)
    p.add_argument("--align", action="store_true")
    p.add_argument("--samples", type=int, default=1000)
    args = parser.parse_args(argv)
    if args.command == "compare":
        print(json.dumps(compare(args.submission, args.reference, args.bodies, args.align, args.samples)))
        return 0
    rendered = render(args.file)
    facts: dict = {}
    if rendered["ok"]:
        vertices, faces, facts = load(Path(rendered["stl"]))
    if args.command == "render" and args.json:
        print(json.dumps({**rendered, **facts}))
    elif args.command == "render":
        print(describe(args.file, rendered, facts))
    elif not rendered["ok"] or vertices is None:
        print(describe(args.file, rendered, facts))
        return 1
    else:
        print(views(vertices, faces))
    return 0 if rendered["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
