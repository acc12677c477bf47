"""The CAD verifier: render the submitted program in a fresh sandbox, then compare it with the reference.

Order matters: the submission is rendered before the reference enters the sandbox (so its program
can't `import` the answer), and the reference goes to a directory whose name it could not guess.
The sandbox measures (cadtool.py compare); `judge` here turns the measurements into a verdict.

Passed: a valid watertight solid with the expected number of bodies, its bounding box within 1 mm
per axis, volume within 2%, Chamfer distance, 95th-percentile and largest Hausdorff distance (over
SAMPLES surface points each way) within 1 mm, and the same number of through-holes (genus) as the
reference. The largest distance is what catches a small feature left out or put in the wrong place
(a keyway, one moved hole): too little of the surface for the 95th percentile to see. Reward 1.

A part that fails earns a shaped score, paid only for getting closer than the reference's own
bounding-box cuboid (the shortcut of leaving every feature out), and never more than CAP:

    0                           if invalid, the wrong number of bodies, or the bounding box off by
                                more than GATE (20% of the part's largest size, at least 2 mm)
    0                           if the genus differs (a through-hole missing or extra)
    CAP * F * (1 - w + w * I)   otherwise, with CAP = 0.5 and, for the reference's volume R,
                                its bounding box's volume B, the submission's volume V and IoU:
      F = clip((f - F0) / (1 - F0)),  f = 1 - |V - R| / (B - R),  F0 = 0.1
            volume skill: the share of the material the features take out of the box that the
            part takes out too (1 for the right volume, 0 for the box; below F0 counts as 0)
      I = clip((IoU - R/B) / (1 - R/B))
            overlap skill: how much of the way from the box's IoU (R/B) to 1 the part gets
      w = min(1/2, R/B)
            the overlap's weight: at most a half, and R/B for hollow parts

The cuboid has f = 0 and I = 0, so it scores exactly 0 whatever the family (and so does anything
no nearer the reference's volume than the box, to within F0). A feature moved elsewhere inside
the part keeps the genus and the volume (F = 1) and costs only overlap; left out, it costs volume
and overlap alike; with w so bounded, the moved feature never scores less (docs/cad_reward.md
has the derivation and the measured figures).

A render that fails or times out, a part of more than MAX_TRIANGLES triangles, or a measurement
that crashes on a strange mesh, is the model's failure: a score-0 verdict saying why. A reference
that does not render, or measuring a part of bounded size that runs out of time (a loaded machine
once scored a correct part 0 so), is ours: `VerifierError`, and the episode stays unverified.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import uuid
from collections.abc import Mapping

from ptrain.errors import ToolError, VerifierError
from ptrain.sandbox.container import Sandbox
from ptrain.taskpack import WORKSPACE, Verdict, place_files
from ptrain_cad.tools import CADTOOL, RENDER_TIMEOUT_S

SUBMISSION_RECORD = ".ptrain-submission.json"  # added to the artifact by the taskpack
DEFAULT_FILE = "part.scad"
TOLERANCE = {"bbox_mm": 1.0, "volume_rel": 0.02, "chamfer_mm": 1.0, "hausdorff95_mm": 1.0, "hausdorff_max_mm": 1.0}
SAMPLES = 4000  # surface points per direction: a feature on 0.1% of the surface is missed 2% of the time
GATE_REL, GATE_MIN_MM = 0.2, 2.0
CAP, F0 = 0.5, 0.1  # the most a failing part earns; volume skill below F0 counts as none
COMPARE_TIMEOUT_S = 120.0  # with the render's 120 + 30 s, inside ptrain's 300 s verify timeout
MAX_TRIANGLES = 300_000  # a submission finer than this is the model's to simplify; below it, measuring is ours


def compare_timeout_s() -> float:
    """How long measuring may take ($PTRAIN_CAD_COMPARE_TIMEOUT_S; raise it on a loaded machine)."""
    return float(os.environ.get("PTRAIN_CAD_COMPARE_TIMEOUT_S") or COMPARE_TIMEOUT_S)


def bbox_error(sub: Mapping, ref: Mapping) -> float:
    """The largest difference, over axes and both ends, between two bounding boxes (mm)."""
    return max(abs(a - b) for key in ("bbox_min", "bbox_max") for a, b in zip(sub[key], ref[key], strict=True))


def clip(x: float) -> float:
    return min(max(x, 0.0), 1.0)


def shaped(metrics: Mapping) -> dict:
    """The failing part's score and its terms: volume skill F and overlap skill I over the reference's
    bounding-box cuboid, and the overlap's weight w (pure; see the module docstring)."""
    ref, sub = metrics["reference"], metrics["submission"]
    box = math.prod(hi - lo for lo, hi in zip(ref["bbox_min"], ref["bbox_max"], strict=True))
    r = ref["volume_mm3"]
    removed = max(box - r, 1e-9 * box)  # what the features take out of the box (a cuboid reference: ~0)
    f = 1 - abs(sub["volume_mm3"] - r) / removed
    volume_skill = clip((f - F0) / (1 - F0))
    overlap_skill = clip((metrics["iou"] - r / box) / (removed / box))
    weight = min(0.5, r / box)
    score = CAP * volume_skill * (1 - weight + weight * overlap_skill)
    terms = {"volume_skill": volume_skill, "overlap_skill": overlap_skill, "overlap_weight": weight, "score": score}
    return {name: round(value, 6) for name, value in terms.items()}


def judge(metrics: Mapping, version: str = "") -> Verdict:
    """A verdict from cadtool's measurements (pure: tested without a sandbox)."""
    details = dict(metrics)
    sub, ref = metrics.get("submission", {}), metrics.get("reference", {})
    if not sub.get("valid"):
        details["reason"] = f"invalid solid: {sub.get('problem', 'not rendered')}"
        return Verdict(0.0, False, details, version)
    if sub["bodies"] != metrics["expected_bodies"]:
        details["reason"] = f"{sub['bodies']} separate bodies, expected {metrics['expected_bodies']}"
        return Verdict(0.0, False, details, version)
    largest = max(hi - lo for lo, hi in zip(ref["bbox_min"], ref["bbox_max"], strict=True))
    gate = max(GATE_MIN_MM, GATE_REL * largest)
    details["bbox_error_mm"] = bbox_error(sub, ref)
    details["volume_error"] = abs(sub["volume_mm3"] - ref["volume_mm3"]) / ref["volume_mm3"]
    if details["bbox_error_mm"] > gate:
        details["reason"] = (
            f"bounding box off by {details['bbox_error_mm']:.1f} mm (more than {gate:.1f}): wrong size or place"
        )
        return Verdict(0.0, False, details, version)
    checks = {
        "bbox": details["bbox_error_mm"] <= TOLERANCE["bbox_mm"],
        "volume": details["volume_error"] <= TOLERANCE["volume_rel"],
        "chamfer": metrics["chamfer_mm"] <= TOLERANCE["chamfer_mm"],
        "hausdorff95": metrics["hausdorff95_mm"] <= TOLERANCE["hausdorff95_mm"],
        "hausdorff_max": metrics["hausdorff_max_mm"] <= TOLERANCE["hausdorff_max_mm"],
        "genus": sub["genus"] == ref["genus"],
    }
    details["checks"] = checks
    failed = [name for name, ok in checks.items() if not ok]
    if not failed:
        details["reason"] = "matches the reference"
        return Verdict(1.0, True, details, version)
    details["reason"] = f"outside tolerance: {', '.join(failed)}"
    if not checks["genus"]:
        details["reason"] += f" ({sub['genus']} through-holes, expected {ref['genus']}: no partial credit)"
        return Verdict(0.0, False, details, version)
    details["shaped"] = shaped(metrics)
    return Verdict(details["shaped"]["score"], False, details, version)


def fail(reason: str, version: str, **details) -> Verdict:
    return Verdict(0.0, False, {"reason": reason, **details}, version)


def submitted_file(record: bytes | None) -> tuple[str, str]:
    """The submitted path inside the workspace, and a note when there was no usable submit call."""
    if record is None:
        return f"{WORKSPACE}/{DEFAULT_FILE}", f"no submit call: scored {DEFAULT_FILE}"
    try:
        path = str(json.loads(record).get("file") or DEFAULT_FILE)
    except (ValueError, AttributeError):
        return f"{WORKSPACE}/{DEFAULT_FILE}", f"unreadable submission record: scored {DEFAULT_FILE}"
    path = path if path.startswith("/") else f"{WORKSPACE}/{path}"
    return path, ""


async def verify_cad(
    sandbox: Sandbox,
    artifact: bytes,
    reference: Mapping[str, bytes],  # {"reference.scad": ...} or {"reference.stl": ...}
    *,
    bodies: int | None = None,
    align: bool = False,
    render_timeout_s: float = RENDER_TIMEOUT_S,
    version: str,
) -> Verdict:
    await sandbox.put_tar(WORKSPACE, artifact)
    try:
        record = await sandbox.read_file(f"{WORKSPACE}/{SUBMISSION_RECORD}")
    except ToolError:
        record = None
    path, note = submitted_file(record)
    extra = {"file": path, **({"note": note} if note else {})}
    if not path.startswith(f"{WORKSPACE}/"):
        return fail(f"the submitted file {path} is outside {WORKSPACE}", version, **extra)
    env = f"PTRAIN_CAD_RENDER_TIMEOUT_S={render_timeout_s:g}"
    result = await sandbox.exec(f"{env} {CADTOOL} render --json {shlex.quote(path)}", timeout_s=render_timeout_s + 30)
    if result.timed_out:
        return fail(f"rendering the submission took more than {render_timeout_s:g} s", version, **extra)
    try:
        rendered = json.loads(result.output.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return fail("rendering the submission crashed", version, output=result.output[-2000:], **extra)
    extra["render"] = {k: rendered.get(k) for k in ("seconds", "errors", "warnings") if k in rendered}
    if not rendered.get("ok"):
        return fail(f"the submission did not render: {rendered.get('error')}", version, **extra)
    if int(rendered.get("triangles") or 0) > MAX_TRIANGLES:
        return fail(f"the submission has {rendered['triangles']} triangles, more than the {MAX_TRIANGLES} "
                    "measured (lower $fn)", version, **extra)  # fmt: skip
    root = f"/tmp/.verify-{uuid.uuid4().hex}"
    await place_files(sandbox, dict(reference), root=root)
    (name,) = reference
    command = f"{CADTOOL} compare {shlex.quote(rendered['stl'])} {root}/{name} --samples {SAMPLES}"
    command += (f" --bodies {bodies}" if bodies is not None else "") + (" --align" if align else "")
    timeout_s = compare_timeout_s()
    result = await sandbox.exec(command, timeout_s=timeout_s, max_output_bytes=1 << 20)
    if result.timed_out:  # a part of bounded size: the machine was slow, not the model wrong
        raise VerifierError(f"CAD verifier: measuring a {rendered.get('triangles')}-triangle part took more than "
                            f"{timeout_s:g} s (a loaded machine? raise $PTRAIN_CAD_COMPARE_TIMEOUT_S)")  # fmt: skip
    try:
        metrics = json.loads(result.output.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return fail("measuring the submission crashed", version, output=result.output[-2000:], **extra)
    if "error" in metrics:
        raise VerifierError(f"CAD verifier: {metrics['error']}")
    verdict = judge(metrics, version)
    return Verdict(verdict.reward, verdict.passed, {**extra, **verdict.details}, version)
