"""The CAD taskpack's generated tasks, imports and verdict rules, without a sandbox."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from ptrain_cad import TASKPACK, Cad
from ptrain_cad.generator import FAMILIES, PART_FILE, generated_tasks, make_part
from ptrain_cad.image import has_wheel, pins, prepare_context
from ptrain_cad.imported import load_imported, load_task
from ptrain_cad.verifier import judge, submitted_file

from ptrain import taskpack
from ptrain.errors import ConfigError
from ptrain.sandbox import runtime

FIXTURES = Path(__file__).parents[1] / "taskpacks" / "cad" / "ptrain_cad" / "fixtures"


@pytest.fixture(scope="module")
def tasks():
    return generated_tasks()


def test_there_are_at_least_twelve_families_and_each_has_every_tier(tasks):
    assert len(FAMILIES) >= 12
    tiers = Counter((t.category, t.difficulty) for t in tasks)
    assert {(family, level) for family in FAMILIES for level in taskpack.DIFFICULTIES} == set(tiers)


def test_harder_tiers_have_more_features():
    for family in FAMILIES:
        counts = {level: [] for level in taskpack.DIFFICULTIES}
        for n in range(30):
            part = make_part(family, n)
            counts[part.difficulty].append(len(part.features))
        mean = {level: sum(c) / len(c) for level, c in counts.items()}
        assert mean["easy"] < mean["medium"] < mean["hard"], (family, mean)


def test_tasks_are_the_same_from_the_same_seed_and_differ_from_another(tasks):
    again = generated_tasks()
    assert [(t.id, t.instruction, t.metadata["reference_scad"]) for t in tasks[:50]] == [
        (t.id, t.instruction, t.metadata["reference_scad"]) for t in again[:50]
    ]
    other = generated_tasks(seed=7, per_family=3)
    assert (
        other[0].id.startswith("cad/s7/") and other[0].metadata["reference_scad"] != tasks[0].metadata["reference_scad"]
    )


def test_thousands_of_train_tasks_and_dev_and_test_splits_by_stable_hash(tasks):
    splits = Counter(t.split for t in tasks)
    assert splits["train"] >= 2000 and splits["dev"] >= 100 and splits["test"] >= 100
    assert all(t.split == taskpack.split_of(t.id) for t in tasks)
    assert len({t.id for t in tasks}) == len(tasks)


def test_every_task_is_well_formed_and_its_instruction_gives_dimensions_origin_and_axes(tasks):
    for t in tasks:
        assert taskpack.check_task(t) == [], t.id
        text = t.instruction
        assert "Dimensions (mm):" in text and "Origin" in text and PART_FILE in text, t.id
        assert len(re.findall(r"\d", text.split("Coordinates:")[0])) >= 4, t.id
        assert t.metadata["reference_scad"].startswith("// ") and "$fn = 48;" in t.metadata["reference_scad"]


def test_the_reference_is_hidden_in_metadata_and_gold_writes_it_then_submits(tasks):
    t = next(t for t in tasks if "sketch_scad" not in t.metadata)
    scad = t.metadata["reference_scad"]
    assert scad not in t.instruction and "linear_extrude" not in t.instruction and "difference" not in t.instruction
    create, submit = TASKPACK.gold(t)
    assert create.name == "str_replace_editor" and create.arguments["file_text"] == scad
    assert create.arguments["path"] == PART_FILE and submit.name == "submit" and submit.arguments == {"file": PART_FILE}


def test_a_sketch_writes_the_drawings_numbers_and_is_the_gold_program(tasks):
    sketched = [t for t in tasks if "sketch_scad" in t.metadata]
    assert {t.category for t in sketched} == {"tube", "hex-spacer", "filleted-block", "stepped-shaft", "u-channel",
                                              "plate-holes", "chamfered-block"}  # fmt: skip
    assert all(t.difficulty == "easy" for t in sketched)
    for t in sketched:
        sketch = t.metadata["sketch_scad"]
        assert TASKPACK.gold(t)[0].arguments["file_text"] == sketch and sketch.startswith("$fn = 48;\n")
        drawing = t.instruction.split("Coordinates:")[0]
        numbers = set(re.findall(r"\d+(?:\.\d+)?", sketch.split("\n", 1)[1])) - {"0", "1", "2", "30", "6", "90"}
        assert numbers <= set(re.findall(r"\d+(?:\.\d+)?", drawing)), (t.id, numbers)  # copied, not computed


def test_the_taskpack_keeps_the_contract_with_its_tools():
    taskpack.validate(TASKPACK, "cad")
    assert [tool.name for tool in TASKPACK.tools()] == ["str_replace_editor", "render", "views", "submit"]
    assert TASKPACK.image.context == runtime.home() / "images" / "cad"


def test_the_image_context_holds_the_containerfile_scripts_and_every_pinned_wheel(tmp_path, monkeypatch):
    monkeypatch.setenv("PTRAIN_CAD_WHEELS", str(TASKPACK.image.context / "wheels"))  # offline: from the cache
    root = prepare_context(tmp_path / "cad")
    assert (root / "Containerfile").is_file() and (root / "measure" / "cadtool.py").is_file()
    assert pins() and all(has_wheel(root / "wheels", pin) for pin in pins())
    (root / "measure" / "stale.py").write_text("")
    prepare_context(root)
    assert not (root / "measure" / "stale.py").exists()


def metrics(**changes):
    base = {
        "submission": {"valid": True, "bodies": 1, "genus": 4, "volume_mm3": 45000.0,
                       "bbox_min": [0, 0, 0], "bbox_max": [100, 50, 10]},
        "reference": {"volume_mm3": 45000.0, "bodies": 1, "genus": 4, "bbox_min": [0, 0, 0], "bbox_max": [100, 50, 10]},
        "expected_bodies": 1, "iou": 0.97, "chamfer_mm": 0.2, "hausdorff95_mm": 0.5, "hausdorff_max_mm": 0.8,
    }  # fmt: skip
    for key, value in changes.items():
        if key in ("submission", "reference"):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    return base


def test_a_part_within_every_tolerance_passes_with_a_reward_of_one():
    verdict = judge(metrics())
    assert verdict.passed and verdict.reward == 1.0 and all(verdict.details["checks"].values())


@pytest.mark.parametrize(
    "changes, reason",
    [
        ({"submission": {"valid": False, "problem": "open edges"}}, "invalid"),
        ({"submission": {"bodies": 2}}, "bodies"),
        ({"submission": {"bbox_max": [10, 10, 10]}}, "bounding box"),  # a small placeholder cube
    ],
)
def test_an_invalid_wrongly_counted_or_misplaced_solid_scores_zero(changes, reason):
    verdict = judge(metrics(**changes))
    assert verdict.reward == 0.0 and not verdict.passed and reason in verdict.details["reason"]


@pytest.mark.parametrize(
    "changes, check",
    [
        ({"submission": {"bbox_max": [101.5, 50, 10]}}, "bbox"),
        ({"submission": {"volume_mm3": 46000.0}}, "volume"),
        ({"chamfer_mm": 1.2}, "chamfer"),
        ({"hausdorff95_mm": 1.5}, "hausdorff95"),
        ({"hausdorff_max_mm": 3.0}, "hausdorff_max"),  # a small feature missing or in the wrong place
    ],
)
def test_a_part_outside_one_tolerance_earns_a_shaped_score_below_half_and_does_not_pass(changes, check):
    verdict = judge(metrics(**changes))
    assert 0 < verdict.reward <= 0.5 and not verdict.passed and not verdict.details["checks"][check]
    assert verdict.reward == verdict.details["shaped"]["score"]


def test_a_part_with_the_wrong_number_of_through_holes_earns_nothing():
    verdict = judge(metrics(submission={"genus": 0}))  # a plain block for a plate with holes
    assert verdict.reward == 0.0 and not verdict.passed and not verdict.details["checks"]["genus"]


def test_the_submitted_file_defaults_to_part_scad_and_relative_paths_are_in_the_workspace():
    assert submitted_file(None) == (PART_FILE, "no submit call: scored part.scad")
    assert submitted_file(b'{"file": "other.scad"}') == ("/workspace/other.scad", "")
    assert submitted_file(b"not json")[0] == PART_FILE


def test_imported_fixtures_load_with_their_mesh_bodies_and_gold():
    tasks = {t.id: t for t in load_imported(FIXTURES)}
    assert set(tasks) == {"cad-import/corner-bracket", "cad-import/flanged-bushing", "cad-import/dowel-pair"}
    pair = tasks["cad-import/dowel-pair"]
    assert pair.metadata["bodies"] == 2 and pair.metadata["reference_stl"][:5] != b"solid"
    assert "aligned to the reference" in pair.instruction and TASKPACK.gold(pair)[0].arguments["file_text"].startswith(
        "//"
    )
    assert load_imported(None) == [] and load_imported(FIXTURES / "missing") == []


def test_the_taskpack_serves_the_imports_named_by_ptrain_cad_import_dir(monkeypatch):
    monkeypatch.setenv("PTRAIN_CAD_IMPORT_DIR", str(FIXTURES))
    ids = {t.id for split in taskpack.SPLITS for t in Cad().tasks(split)}
    assert {"cad-import/corner-bracket", "cad-import/dowel-pair"} <= ids and "cad/flange/0000" in ids
    monkeypatch.delenv("PTRAIN_CAD_IMPORT_DIR")
    assert not any(i.startswith("cad-import/") for split in taskpack.SPLITS for i in (t.id for t in Cad().tasks(split)))


def test_an_import_whose_bbox_disagrees_with_its_mesh_or_lacks_a_field_is_a_config_error(tmp_path):
    (tmp_path / "part.stl").write_bytes((FIXTURES / "flanged-bushing.stl").read_bytes())
    (tmp_path / "wrong.yaml").write_text("description: x\nreference_mesh: part.stl\nbbox: [10, 10, 10]\nbodies: 1\n")
    with pytest.raises(ConfigError, match="does not match"):
        load_task(tmp_path / "wrong.yaml")
    (tmp_path / "short.yaml").write_text("description: x\nreference_mesh: part.stl\n")
    with pytest.raises(ConfigError, match="bbox"):
        load_task(tmp_path / "short.yaml")
