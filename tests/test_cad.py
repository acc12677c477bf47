"""The CAD taskpack in real sandboxes: OpenSCAD renders, the tools, and the verifier's verdicts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from ptrain_cad import TASKPACK, Cad
from ptrain_cad.generator import FAMILIES, PART_FILE
from ptrain_cad.imported import load_imported

from ptrain import taskpack
from ptrain.sandbox import PoolSet, images
from ptrain.taskpack import ToolCall
from ptrain.verify import check_taskpack, replay, verify_artifact

pytestmark = pytest.mark.podman

FIXTURES = Path(__file__).parents[1] / "taskpacks" / "cad" / "ptrain_cad" / "fixtures"


def task(task_id: str):
    return next(t for split in taskpack.SPLITS for t in TASKPACK.tasks(split) if t.id == task_id)


def first_of(family: str, difficulty: str = "easy"):
    return next(
        t
        for split in taskpack.SPLITS
        for t in TASKPACK.tasks(split)
        if t.category == family and t.difficulty == difficulty
    )


@pytest.fixture(scope="module")
async def pools(base_image):
    images.build_taskpack(TASKPACK.image)
    async with PoolSet(size=2, max_active=8) as pools:
        yield pools


async def submit(pools, t, scad: str | None, pack=TASKPACK):
    calls = [] if scad is None else [
        ToolCall("str_replace_editor", {"command": "create", "path": PART_FILE, "file_text": scad}),
        ToolCall("submit", {"file": PART_FILE}),
    ]  # fmt: skip
    return await verify_artifact(pack, t, await replay(pack, t, calls, pools), pools)


async def run_tools(pools, calls: list[ToolCall]) -> list:
    from ptrain.tools import run_tool_call

    async with pools.sandbox(TASKPACK.image) as sandbox:
        tools = TASKPACK.tools()
        return [await run_tool_call(tools, call, sandbox) for call in calls]


@pytest.mark.slow
async def test_gold_scores_one_and_a_no_op_scores_zero_for_one_task_of_each_family(pools):
    tasks = [first_of(family, ("easy", "medium", "hard")[i % 3]) for i, family in enumerate(FAMILIES)]
    results = await check_taskpack(TASKPACK, tasks, pools, concurrency=3)
    assert [r.problem for r in results if not r.ok] == []


@pytest.mark.parametrize(
    "name, scad, reason",
    [
        ("an_empty_file", "", "did not render"),
        ("a_plain_cube", "cube(10);", "bounding box"),
        ("two_cubes_touching_on_an_edge", "cube(10); translate([10, 10, 0]) cube(10);", "invalid solid"),
        ("a_syntax_error", "cube(10);\nsphere(3;", "did not render"),
    ],
)
async def test_a_submission_that_is_no_part_of_the_drawing_scores_zero(pools, name, scad, reason):
    verdict = await submit(pools, first_of("flange", "hard"), scad)
    assert verdict.reward == 0.0 and not verdict.passed and reason in verdict.details["reason"], verdict.details


async def probe_verdict(pools, t):
    (probe,) = TASKPACK.probes(t)
    return await verify_artifact(TASKPACK, t, await replay(TASKPACK, t, probe.calls, pools), pools)


@pytest.mark.parametrize("family", ["plate-holes", "filleted-block"])
async def test_the_bounding_box_cuboid_probe_scores_zero_where_the_iou_paid_it_over_nine_tenths(pools, family):
    verdict = await probe_verdict(pools, first_of(family, "easy"))  # old reward 0.99 and 0.97
    assert verdict.reward == 0.0 and not verdict.passed and verdict.details["iou"] > 0.9, verdict.details


async def test_the_reference_passes_every_check_and_a_slightly_wrong_part_earns_a_shaped_score(pools):
    t = first_of("stepped-shaft", "easy")
    gold = await submit(pools, t, t.metadata["reference_scad"])
    assert gold.reward == 1.0 and gold.passed and all(gold.details["checks"].values()), gold.details
    wrong = t.metadata["reference_scad"].replace("rotate_extrude()", "scale([1.05, 1.05, 1]) rotate_extrude()")
    verdict = await submit(pools, t, wrong)
    assert 0.1 < verdict.reward < 0.5 and not verdict.passed and verdict.details["checks"]["volume"] is False


async def test_a_gear_blank_without_its_keyway_fails_and_scores_no_more_than_one_with_it_misplaced(pools):
    t = first_of("gear-blank", "medium")
    scad = t.metadata["reference_scad"]
    keyway = next(line for line in scad.splitlines() if "cube(" in line)
    left_out = await submit(pools, t, scad.replace(keyway, ""))
    misplaced = await submit(pools, t, scad.replace(keyway, f"  mirror([1, 0, 0]) {keyway.strip()}"))
    assert not left_out.passed and left_out.details["checks"]["hausdorff_max"] is False, left_out.details
    assert not misplaced.passed and 0 < left_out.reward <= misplaced.reward < 0.5


@pytest.mark.slow
async def test_the_bounding_box_cuboid_probe_scores_zero_and_gold_one_on_a_task_of_each_family(pools):
    tasks = [first_of(family, ("medium", "hard", "easy")[i % 3]) for i, family in enumerate(FAMILIES)]
    gate = asyncio.Semaphore(3)

    async def both(t):
        async with gate:
            return await submit(pools, t, t.metadata["reference_scad"]), await probe_verdict(pools, t)

    for t, (gold, probe) in zip(tasks, await asyncio.gather(*(both(t) for t in tasks)), strict=True):
        assert gold.reward == 1.0 and probe.reward == 0.0, (t.id, gold.details["reason"], probe.details)
        reference = probe.details["reference"]  # the box the probe was given is the rendered reference's
        for key in ("bbox_min", "bbox_max"):
            assert max(abs(a - b) for a, b in zip(reference[key], t.metadata[key], strict=True)) < 1e-3, t.id


async def test_the_right_part_modelled_with_finer_circles_still_passes(pools):
    t = first_of("flange", "medium")
    verdict = await submit(pools, t, t.metadata["reference_scad"].replace("$fn = 48;", "$fn = 120;"))
    assert verdict.passed and verdict.reward == 1.0 and verdict.details["iou"] > 0.99, verdict.details


async def test_a_render_that_never_finishes_becomes_a_zero_verdict_with_the_reason(pools):
    impatient = Cad(render_timeout_s=3)
    spin = "rows = [for (i = [0:20000]) len([for (j = [0:20000]) j])];\ncube(rows[0]);"  # 4e8 steps
    verdict = await submit(pools, first_of("tube"), spin, pack=impatient)
    assert verdict.reward == 0.0 and "did not finish within 3 s" in verdict.details["reason"]


async def test_render_reports_errors_and_measures_the_solid_and_views_draw_it(pools):
    plate = "difference() { cube([40, 20, 5]); translate([20, 10, -1]) cylinder(h = 7, d = 8, $fn = 32); }"
    created, rendered, views, broken = await run_tools(pools, [
        ToolCall("str_replace_editor", {"command": "create", "path": PART_FILE, "file_text": plate}),
        ToolCall("render", {"file": "part.scad"}),
        ToolCall("views", {"file": PART_FILE}),
        ToolCall("render", {"file": "/workspace/missing.scad"}),
    ])  # fmt: skip
    assert not created.is_error and not rendered.is_error, rendered.content
    for fact in ("Valid solid", "Bodies: 1", "through-holes (genus): 1", "X: 0.00 .. 40.00", "Z: 0.00 .. 5.00"):
        assert fact in rendered.content, rendered.content
    assert "Volume: 3749" in rendered.content or "Volume: 375" in rendered.content
    assert "TOP view" in views.content and "FRONT view" in views.content and "SIDE view" in views.content
    top = views.content.split("FRONT view")[0].splitlines()
    middle = top[2 + len([line for line in top if line.startswith("|")]) // 2]
    assert " " in middle.strip("|").strip() and "9" in middle  # the hole shows through the top face
    assert broken.is_error and "no such file" in broken.content


async def test_an_error_in_the_program_comes_back_with_openscad_s_message(pools):
    _, rendered = await run_tools(pools, [
        ToolCall("str_replace_editor", {"command": "create", "path": PART_FILE, "file_text": "cube(10);\nsphere(3;"}),
        ToolCall("render", {"file": PART_FILE}),
    ])  # fmt: skip
    assert rendered.is_error and "ERROR: Parser error" in rendered.content and "line 2" in rendered.content


async def test_an_imported_part_built_turned_and_moved_is_aligned_before_it_is_measured(pools):
    bracket = next(t for t in load_imported(FIXTURES) if t.id == "cad-import/corner-bracket")
    moved = f"translate([100, -20, 5]) rotate([90, 0, 30])\n{{\n{bracket.metadata['reference_scad']}\n}}"
    verdict = await submit(pools, bracket, moved)
    assert verdict.passed and verdict.reward > 0.97 and verdict.details["aligned"] is True, verdict.details
    assert verdict.details["alignment"]["iou_as_placed"] < 0.1
    assert (await submit(pools, bracket, "cube([50, 40, 35]);")).passed is False


async def test_measuring_a_correct_part_that_runs_out_of_time_is_the_verifiers_error_not_a_zero(pools, monkeypatch):
    """A loaded machine once took more than 120 s to measure a correct part, and the model got 0 for it."""
    from ptrain.errors import VerifierError

    bracket = next(t for t in load_imported(FIXTURES) if t.id == "cad-import/corner-bracket")
    monkeypatch.setenv("PTRAIN_CAD_COMPARE_TIMEOUT_S", "0.01")
    with pytest.raises(VerifierError, match="measuring a .*-triangle part took more than 0.01 s"):
        await submit(pools, bracket, bracket.metadata["reference_scad"])


async def test_a_part_too_fine_to_measure_is_the_models_failure(pools, monkeypatch):
    import ptrain_cad.verifier

    bracket = next(t for t in load_imported(FIXTURES) if t.id == "cad-import/corner-bracket")
    monkeypatch.setattr(ptrain_cad.verifier, "MAX_TRIANGLES", 10)
    verdict = await submit(pools, bracket, bracket.metadata["reference_scad"])
    assert verdict.reward == 0.0 and "triangles, more than the 10 measured" in verdict.details["reason"], (
        verdict.details
    )
