"""The CAD reward's shape, on measurements taken in real sandboxes (taskpacks/cad/reward_table.py),
and the bounding-box probe the taskpack adds to `ptrain taskpacks check`; no sandbox here."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from ptrain_cad import TASKPACK
from ptrain_cad.generator import FAMILIES, PART_FILE
from ptrain_cad.imported import load_imported
from ptrain_cad.probes import bbox_cuboid
from ptrain_cad.verifier import CAP, judge, shaped

from ptrain.taskpack import Probe

FIXTURES = Path(__file__).parents[1] / "taskpacks" / "cad" / "ptrain_cad" / "fixtures"


def measured(ref, sub, iou, chamfer, h95, hmax) -> dict:
    """cadtool compare's output from (volume, genus, bbox_min, bbox_max) of each side and the distances."""

    def side(volume, genus, lo, hi):
        return {"valid": True, "bodies": 1, "genus": genus, "volume_mm3": volume, "bbox_min": lo, "bbox_max": hi}

    return {"reference": side(*ref), "submission": side(*sub), "expected_bodies": 1, "iou": iou,
            "chamfer_mm": chamfer, "hausdorff95_mm": h95, "hausdorff_max_mm": hmax}  # fmt: skip


# the bounding-box cuboid of each family, on the tier where the IoU paid it most (cad/0.1.0's reward)
CUBOIDS = [
    ("cad/plate-holes/0000", 0.990, (76041.9, 4, [0, 0, 0], [160, 60, 8]), (76800.0, 0, [0, 0, 0], [160, 60, 8]), 0.990129, 0.0261031, 0.0, 3.99915),
    ("cad/l-bracket/0001", 0.217, (46974.2, 2, [0, 0, 0], [80, 45, 60]), (216000.0, 0, [0, 0, 0], [80, 45, 60]), 0.217473, 8.18315, 51.1702, 52.0567),
    ("cad/box-lid-lip/0001", 0.244, (46179.0, 0, [0, 0, 0], [90, 60, 35]), (189000.0, 0, [0, 0, 0], [90, 60, 35]), 0.244333, 1.91726, 15.7885, 26.8269),
    ("cad/hinge-leaf/0002", 0.437, (11981.8, 6, [0, -3.5, 0], [90, 40, 7]), (27405.0, 0, [0, -3.5, 0], [90, 40, 7]), 0.437212, 1.51022, 4.0, 5.32802),
    ("cad/countersunk-plate/0000", 0.994, (33414.1, 2, [0, 0, 0], [70, 60, 8]), (33600.0, 0, [0, 0, 0], [70, 60, 8]), 0.994467, 0.019083, 0.0, 3.89742),
    ("cad/chamfered-block/0001", 0.927, (44611.3, 0, [0, 0, 0], [55, 35, 25]), (48125.0, 0, [0, 0, 0], [55, 35, 25]), 0.926989, 0.470917, 4.13021, 5.79695),
    ("cad/filleted-block/0000", 0.965, (17375.5, 0, [0, 0, 0], [30, 30, 20]), (18000.0, 0, [0, 0, 0], [30, 30, 20]), 0.965305, 0.160699, 1.63147, 2.48225),
    ("cad/slot-pocket/0001", 0.934, (179792.0, 1, [0, 0, 0], [110, 70, 25]), (192500.0, 0, [0, 0, 0], [110, 70, 25]), 0.933985, 0.512488, 8.64503, 12.4891),
    ("cad/u-channel/0000", 0.388, (23280.0, 0, [0, 0, 0], [60, 25, 40]), (60000.0, 0, [0, 0, 0], [60, 25, 40]), 0.388, 1.22525, 6.59765, 8.49855),
    ("cad/flange/0000", 0.628, (36914.9, 9, [-35, -35, 0], [35, 35, 12]), (58800.0, 0, [-35, -35, 0], [35, 35, 12]), 0.627804, 1.75712, 10.6767, 14.4874),
    ("cad/stepped-shaft/0000", 0.482, (28193.7, 0, [-15, -15, 0], [15, 15, 65]), (58500.0, 0, [-15, -15, 0], [15, 15, 65]), 0.481943, 3.98524, 10.1625, 11.1975),
    ("cad/tube/0000", 0.460, (39627.8, 1, [-14, -14, 0], [14, 14, 110]), (86240.0, 0, [-14, -14, 0], [14, 14, 110]), 0.459506, 2.45714, 6.98877, 8.36884),
    ("cad/hex-spacer/0000", 0.736, (5755.71, 1, [-12.7015, -10.9998, 0], [12.7015, 10.9998, 14]), (7824.43, 0, [-12.702, -11, 0], [12.702, 11, 14]), 0.735608, 1.04985, 4.78916, 6.99852),
    ("cad/gear-blank/0001", 0.499, (132088.0, 1, [-57.5, -57.5, 0], [57.5, 57.5, 20]), (264500.0, 0, [-57.5, -57.5, 0], [57.5, 57.5, 20]), 0.499386, 4.59142, 18.1358, 24.8416),
]  # fmt: skip

# one feature moved inside the part (genus unchanged) against the same feature left out
MISPLACED = [  # (name, reference, (submission, iou, chamfer, hausdorff95, max) moved, the same left out)
    ("plate-holes/0000", (76041.9, 4, [0, 0, 0], [160, 60, 8]),
     ((76041.9, 4, [0, 0, 0], [160, 60, 8]), 0.995028, 0.0141577, 1.16553e-12, 3.77384),
     ((76231.4, 3, [0, 0, 0], [160, 60, 8]), 0.997514, 0.00536441, 1.06836e-12, 3.49986)),
    ("countersunk-plate/0000", (33414.1, 2, [0, 0, 0], [70, 60, 8]),
     ((33414.1, 2, [0, 0, 0], [70, 60, 8]), 0.994452, 0.0224075, 1.08002e-13, 3.99615),
     ((33507.1, 1, [0, 0, 0], [70, 60, 8]), 0.997226, 0.00942292, 4.9738e-14, 3.21289)),
    ("flange/0000", (36914.9, 9, [-35, -35, 0], [35, 35, 12]),
     ((36914.9, 9, [-35, -35, 0], [35, 35, 12]), 0.966237, 0.0737458, 1.43253e-13, 5.98339),
     ((37676.1, 8, [-35, -35, 0], [35, 35, 12]), 0.979795, 0.0526289, 8.58589e-14, 5.98339)),
    ("chamfered-block/0002", (47163.4, 1, [0, 0, 0], [50, 35, 30]),
     ((47163.4, 1, [0, 0, 0], [50, 35, 30]), 0.964765, 0.364692, 3.3937, 8.9981),
     ((48009.2, 0, [0, 0, 0], [50, 35, 30]), 0.982382, 0.281568, 4.54932, 14.9358)),
    ("slot-pocket/0001", (179792.0, 1, [0, 0, 0], [110, 70, 25]),
     ((179792.0, 1, [0, 0, 0], [110, 70, 25]), 0.983452, 0.123265, 3.88143e-13, 5.0),
     ((184292.0, 1, [0, 0, 0], [110, 70, 25]), 0.975582, 0.216434, 0.517439, 12.0)),
    ("filleted-block/0001", (16062.7, 0, [0, 0, 0], [40, 30, 18]),
     ((16062.7, 0, [0, 0, 0], [40, 30, 18]), 0.941969, 0.172242, 2.06884, 3.0),
     ((20835.0, 0, [0, 0, 0], [40, 30, 18]), 0.77095, 0.911519, 8.0, 8.0)),
    ("stepped-shaft/0002", (109732.0, 1, [-19, -19, 0], [19, 19, 170]),
     ((109732.0, 1, [-19, -19, 0], [19, 19, 170]), 0.991384, 0.0754122, 2.34928e-08, 4.99864),
     ((110207.0, 0, [-19, -19, 0], [19, 19, 170]), 0.995692, 0.129036, 1.68582e-07, 18.2905)),
    ("gear-blank/0001", (132088.0, 1, [-57.5, -57.5, 0], [57.5, 57.5, 20]),
     ((132088.0, 1, [-57.5, -57.5, 0], [57.5, 57.5, 20]), 0.994233, 0.0263122, 5.01534e-14, 3.35909),
     ((132469.0, 1, [-57.5, -57.5, 0], [57.5, 57.5, 20]), 0.997117, 0.0120002, 9.51801e-14, 3.34495)),
    ("hex-spacer/0001", (3173.42, 1, [-9.81499, -8.50003, 0], [9.81499, 8.50003, 14]),
     ((3171.73, 1, [-9.81499, -8.50003, 0], [9.81499, 8.50003, 14]), 0.964256, 0.0798183, 0.817574, 1.92196),
     ((3301.24, 1, [-9.81499, -8.50003, 0], [9.81499, 8.50003, 14]), 0.961284, 0.0905737, 1.34814, 1.6999)),
]  # fmt: skip


def test_a_part_within_every_tolerance_scores_one():
    ref = (44611.3, 0, [0, 0, 0], [55, 35, 25])
    verdict = judge(measured(ref, (44620.0, 0, [0, 0, 0], [55, 35, 25.2]), 0.998, 0.05, 0.2, 0.6))
    assert verdict.passed and verdict.reward == 1.0 and verdict.details["reason"] == "matches the reference"


def test_the_families_cover_every_generated_family():
    assert {task_id.split("/")[1] for task_id, *_ in CUBOIDS} == set(FAMILIES)


@pytest.mark.parametrize("task_id, old, ref, sub, iou, chamfer, h95, hmax", CUBOIDS, ids=[c[0] for c in CUBOIDS])
def test_the_bounding_box_cuboid_of_every_family_scores_zero(task_id, old, ref, sub, iou, chamfer, h95, hmax):
    verdict = judge(measured(ref, sub, iou, chamfer, h95, hmax))
    assert verdict.reward == 0.0 and not verdict.passed and round(iou, 3) == old, verdict.details


@pytest.mark.parametrize("name, ref, moved, left_out", MISPLACED, ids=[m[0] for m in MISPLACED])
def test_a_misplaced_feature_scores_at_least_as_much_as_the_same_part_without_it(name, ref, moved, left_out):
    misplaced, without = judge(measured(ref, *moved)), judge(measured(ref, *left_out))
    assert not misplaced.passed and not without.passed
    assert misplaced.reward >= without.reward and 0 < misplaced.reward < CAP, (misplaced.details, without.details)


def test_a_missing_or_extra_through_hole_earns_nothing_however_close_the_rest():
    ref = (76041.9, 4, [0, 0, 0], [160, 60, 8])
    for genus in (3, 5):
        verdict = judge(measured(ref, (76041.9, genus, [0, 0, 0], [160, 60, 8]), 0.999, 0.01, 0.0, 0.5))
        assert verdict.reward == 0.0 and "no partial credit" in verdict.details["reason"]


def test_a_failing_part_earns_less_than_the_cap_and_more_for_volume_and_overlap_nearer_the_reference():
    ref = (30000.0, 0, [0, 0, 0], [50, 40, 20])  # the box holds 40000: the features take 10000 out
    scores = {}
    for volume, iou in itertools.product(
        (30000.0, 32000.0, 35000.0, 39000.0, 40000.0, 20000.0), (0.75, 0.8, 0.9, 0.99)
    ):
        verdict = judge(measured(ref, (volume, 0, [0, 0, 0], [50, 40, 20]), iou, 1.5, 3.0, 5.0))
        assert not verdict.passed and 0.0 <= verdict.reward <= CAP
        scores[volume, iou] = verdict.reward
    assert scores[30000.0, 0.99] > scores[30000.0, 0.9] > scores[30000.0, 0.8] > scores[30000.0, 0.75] > 0
    assert scores[30000.0, 0.9] > scores[32000.0, 0.9] > scores[35000.0, 0.9] > scores[39000.0, 0.9] == 0.0
    assert scores[40000.0, 0.99] == 0.0 and scores[20000.0, 0.99] == 0.0  # no better than the box, or worse
    assert scores[30000.0, 0.75] == CAP / 2  # the right volume with the box's overlap earns half


def test_the_shaped_terms_are_in_the_details_and_a_cuboid_reference_gives_no_partial_credit():
    verdict = judge(
        measured((35000.0, 0, [0, 0, 0], [50, 40, 20]), (35500.0, 0, [0, 0, 0], [50, 40, 20.5]), 0.95, 1.2, 2.0, 3.0)
    )
    assert set(verdict.details["shaped"]) == {"volume_skill", "overlap_skill", "overlap_weight", "score"}
    assert verdict.reward == verdict.details["shaped"]["score"] > 0
    box = measured((40000.0, 0, [0, 0, 0], [50, 40, 20]), (39000.0, 0, [0, 0, 0], [50, 40, 19.5]), 0.975, 0.3, 0.5, 1.2)
    assert judge(box).reward == 0.0 and shaped(box)["volume_skill"] == 0.0


def test_a_part_whose_surface_strays_more_than_a_millimetre_anywhere_does_not_pass():
    ref = (132088.0, 1, [-57.5, -57.5, 0], [57.5, 57.5, 20])  # a gear blank without its keyway
    verdict = judge(measured(ref, (132376.0, 1, [-57.5, -57.5, 0], [57.5, 57.5, 20]), 0.9978, 0.01, 0.0, 3.35))
    assert not verdict.passed and verdict.details["checks"]["hausdorff_max"] is False and 0 < verdict.reward < CAP


def test_the_bbox_cuboid_probe_writes_the_reference_box_as_a_cube_and_submits_it():
    tasks = [next(t for t in TASKPACK.all_tasks if t.category == family) for family in FAMILIES]
    for t in tasks + load_imported(FIXTURES):
        (probe,) = TASKPACK.probes(t)
        assert isinstance(probe, Probe) and probe.name == "bbox-cuboid" and probe == bbox_cuboid(t)
        write, submit = probe.calls
        assert write.name == "str_replace_editor" and write.arguments["path"] == PART_FILE
        assert submit.name == "submit" and submit.arguments == {"file": PART_FILE}
        assert "cube(" in write.arguments["file_text"] and "difference" not in write.arguments["file_text"]
    hex_spacer = next(t for t in tasks if t.category == "hex-spacer")
    lo, hi = hex_spacer.metadata["bbox_min"], hex_spacer.metadata["bbox_max"]
    assert (
        f"translate([{lo[0]:g}, {lo[1]:g}, 0]) cube([{hi[0] - lo[0]:g}, {hi[1] - lo[1]:g}, {hi[2]:g}])"
        in (TASKPACK.probes(hex_spacer)[0].calls[0].arguments["file_text"])
    )
