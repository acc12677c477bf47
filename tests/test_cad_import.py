"""CAD benchmark imports as published: CadEval's schema and ptrain's, a report per file, the test split
by default, and a bad file skipped without stopping the others or `ptrain taskpacks list`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import yaml
from ptrain_cad.imported import CadImportWarning, import_tasks, load_imported

FIXTURES = Path(__file__).parents[1] / "taskpacks" / "cad" / "ptrain_cad" / "fixtures"
PTRAIN = str(Path(sys.executable).parent / "ptrain")

# CadEval's layout (tasks/*.yaml beside reference/*.stl, paths relative to the checkout), written here
# around this repository's own fixture meshes
BUSHING = """task_id: "task7"
description: "Flanged bushing: a 20 mm barrel with a 12 mm bore, 30 mm long, a 36 mm flange 4 mm thick."
reference_stl: "./reference/task7.stl"
requirements:
  bounding_box: [36.0, 36.0, 30.0]
  topology_requirements:
    expected_component_count: 1
manual_operations: 3
"""
DOWELS = """task_id: "task8"
description: "Two stepped dowel pins side by side, 30 mm apart."
reference_stl: "./reference/task8.stl"
requirements:
  bounding_box: [40, 10, 28]
  topology_requirements:
    expected_component_count: 2
"""
WRONG_BOX = """task_id: "task9"
description: "A bracket."
reference_stl: "./reference/task9.stl"
requirements:
  bounding_box: [10, 10, 10]
"""
UNCLOSED = 'task_id: "task1"\ndescription: "A hex nut.\n\n1. 10mm wide.\nreference_stl: "./reference/task1.stl"\n'


@pytest.fixture
def cadeval(tmp_path) -> Path:
    root = tmp_path / "cadeval"
    (root / "tasks").mkdir(parents=True)
    (root / "reference").mkdir()
    for number, fixture in (("7", "flanged-bushing"), ("8", "dowel-pair"), ("9", "corner-bracket")):
        shutil.copy(FIXTURES / f"{fixture}.stl", root / "reference" / f"task{number}.stl")
    for name, text in (("task7", BUSHING), ("task8", DOWELS), ("task9", WRONG_BOX), ("task1", UNCLOSED)):
        (root / "tasks" / f"{name}.yaml").write_text(text)
    return root


def test_cadevals_schema_imports_as_published_into_the_test_split(cadeval, tmp_path):
    results = {r.source.stem: r for r in import_tasks(cadeval, tmp_path / "out")}
    assert {k: r.status for k, r in results.items()} == {
        "task1": "refused", "task7": "imported with warnings", "task8": "imported with warnings", "task9": "refused"}  # fmt: skip
    assert "task1.yaml: ParserError" in results["task1"].error
    assert "does not match the mesh" in results["task9"].error
    assert any("no gold" in w for w in results["task7"].warnings)
    assert (results["task7"].task_id, results["task7"].split) == ("cad-import/task7", "test")
    tasks = {t.id: t for t in load_imported(tmp_path / "out")}
    assert set(tasks) == {"cad-import/task7", "cad-import/task8"}
    assert tasks["cad-import/task8"].metadata["bodies"] == 2 and tasks["cad-import/task7"].difficulty == "easy"
    assert all(t.split == "test" for t in tasks.values())
    again = import_tasks(cadeval / "tasks" / "task7.yaml", tmp_path / "out", split="")  # ptrain's schema now
    assert again[0].status == "imported with warnings" and again[0].split == "test"


def test_ptrains_schema_imports_with_its_gold_and_keeps_a_split_when_asked(tmp_path):
    results = import_tasks(FIXTURES, tmp_path / "out", split="train")
    assert [r.status for r in results] == ["imported"] * 3, [r.warnings + [r.error] for r in results]
    assert {t.split for t in load_imported(tmp_path / "out")} == {"train"}
    written = yaml.safe_load((tmp_path / "out" / "corner-bracket.yaml").read_text())
    assert written["solution"] == "corner-bracket.scad" and (tmp_path / "out" / "corner-bracket.scad").is_file()


def test_a_bad_file_in_the_import_directory_is_skipped_with_a_warning_and_the_rest_load(tmp_path):
    for name in ("flanged-bushing.yaml", "flanged-bushing.stl", "flanged-bushing.scad"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    (tmp_path / "broken.yaml").write_text(UNCLOSED)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tasks = load_imported(tmp_path)
    assert [t.id for t in tasks] == ["cad-import/flanged-bushing"]
    assert [w.category for w in caught] == [CadImportWarning] and "broken.yaml" in str(caught[0].message)


def test_import_cad_reports_each_file_and_a_bad_one_never_breaks_the_taskpack_listing(cadeval, tmp_path):
    env = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run([PTRAIN, "taskpacks", "import-cad", str(cadeval), "--dest", str(tmp_path / "out"), "--json"],
                          capture_output=True, text=True, env=env, timeout=300)  # fmt: skip
    assert done.returncode == 1  # two refused
    report = json.loads(done.stdout)
    assert sorted(r["status"] for r in report["results"]) == [
        "imported with warnings", "imported with warnings", "refused", "refused"]  # fmt: skip
    (tmp_path / "out" / "broken.yaml").write_text(UNCLOSED)  # a bad file in the import directory itself
    env["PTRAIN_CAD_IMPORT_DIR"] = str(tmp_path / "out")
    listed = subprocess.run([PTRAIN, "taskpacks", "list", "--json"], capture_output=True, text=True, env=env,
                            timeout=300)  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    cad = next(row for row in json.loads(listed.stdout) if row["name"] == "cad")
    assert cad["error"] is None and cad["test"] >= 2
    assert "broken.yaml" in listed.stderr and "skipped" in listed.stderr


@pytest.mark.podman
def test_check_require_gold_reports_an_imported_task_without_gold_as_such(cadeval, tmp_path, base_image):
    import_tasks(cadeval, tmp_path / "out")
    env = {**os.environ, "COLUMNS": "200", "PTRAIN_CAD_IMPORT_DIR": str(tmp_path / "out")}
    command = [PTRAIN, "taskpacks", "check", "cad", "--task", "cad-import/task7", "--no-probes", "--json"]
    plain = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert plain.returncode == 0, plain.stdout + plain.stderr  # nothing wrong found, but nothing passed either
    report = json.loads(plain.stdout)
    assert (report["passed"], report["no_gold"], report["results"][0]["status"]) == (0, 1, "no gold")
    strict = subprocess.run([*command, "--require-gold"], capture_output=True, text=True, env=env, timeout=600)
    assert strict.returncode == 1 and json.loads(strict.stdout)["no_gold"] == 1
