"""Bug-injection tasks: mutation operators, the build that keeps caught mutants, and the tasks made from them.

Mutants are checked the way the verifier checks an episode: the hidden tests run from a directory of
their own with `python -I -m pytest`, the workspace appended to `sys.path` by the verifier's conftest.
"""

from __future__ import annotations

import ast
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from ptrain_terminal_coding import TASKPACK, mutation
from ptrain_terminal_coding.mutation.probes import mutation_probes
from ptrain_terminal_coding.verifier import CONFTEST

from ptrain.errors import ConfigError
from ptrain.sandbox import PoolSet
from ptrain.taskpack import DIFFICULTIES, SPLITS, Task, ToolCall, check_task
from ptrain.verify import replay, verify_artifact

EXAMPLE = """\
def clamp(values, low, high, strict=False):
    out = []
    for i in range(len(values)):
        value = values[i]
        if value is None:
            continue
        if strict and not low <= value < high:
            raise ValueError(-1)
        out.append(max(low, min(value, high)) * 2 + i)
    total = 0
    total += len(out[1:])
    return out if total > 0 else []
"""


def mutated_texts(operator: str, text: str) -> list[str]:
    src = mutation.Source(text)
    return [mutation.apply_edit(text, edit) for edit in mutation.OPERATORS[operator](ast.parse(text), src)]


@pytest.mark.parametrize("operator", list(mutation.OPERATORS))
def test_every_operator_turns_a_small_program_into_different_valid_programs(operator):
    texts = mutated_texts(operator, EXAMPLE)
    assert texts, f"{operator} found nothing to mutate"
    original = ast.dump(ast.parse(EXAMPLE))
    for text in texts:
        assert ast.dump(ast.parse(text)) != original


@pytest.mark.parametrize(
    ("operator", "source", "expected"),
    [
        ("comparison", "ok = a < b\n", "ok = a <= b\n"),
        ("comparison", "ok = x not in ys\n", "ok = x in ys\n"),
        ("comparison_flip", "ok = (a) >= b\n", "ok = (a) <= b\n"),
        ("arithmetic", "n = a // (b + c)\n", "n = a / (b + c)\n"),
        ("arithmetic", "n += 2\n", "n -= 2\n"),
        ("boolean", "ok = (a or b) and c\n", "ok = (a or b) or c\n"),
        ("drop_operand", "ok = (a or b) and c\n", "ok = (a or b)\n"),
        ("negate_condition", "if a < b:\n    pass\n", "if not (a < b):\n    pass\n"),
        ("drop_guard", "def f(x):\n    if x < 0:\n        return 0\n    return x\n", "def f(x):\n    return x\n"),
        ("drop_unary", "y = -x\n", "y = x\n"),
        ("drop_unary", "ok = not (a or b)\n", "ok = (a or b)\n"),
        ("swap_bool", "flag = True\n", "flag = False\n"),
        ("min_max", "top = max(xs)\n", "top = min(xs)\n"),
        ("constant", "xs[0]\n", "xs[-1]\n"),
        ("bound", "tail = xs[i:]\n", "tail = xs[i + 1:]\n"),
        ("bound", "for i in range(a < b):\n    pass\n", "for i in range((a < b) - 1):\n    pass\n"),
        ("wrong_variable", "def f(a, b):\n    return a\n", "def f(a, b):\n    return b\n"),
    ],
)
def test_an_operator_plants_the_bug_it_is_named_for(operator, source, expected):
    assert expected in mutated_texts(operator, source)


def test_a_mutant_changes_one_spot_and_keeps_the_rest_of_the_formatting():
    text = EXAMPLE.replace("    out = []\n", "    out = [  ]   # odd spacing survives\n")
    for operator, edit in mutation.mutants_of_source(text):
        mutated = mutation.apply_edit(text, edit)
        changed = [line for line in difflib.ndiff(text.splitlines(), mutated.splitlines()) if line[:1] in "+-"]
        assert "    out = [  ]   # odd spacing survives" in mutated.splitlines()
        assert 1 <= len(changed) <= 2, (operator, changed)


def test_a_wrong_variable_is_one_that_already_holds_a_value_in_the_same_function():
    text = "def f(a):\n    b = a\n    c = b\n    return c\n\n\ndef g(z):\n    return z\n"
    mutants = mutated_texts("wrong_variable", text)
    assert len(mutants) == 2  # `b = a` has no other choice: b is bound only after its own statement
    assert text.replace("c = b", "c = a") in mutants
    assert all(t.endswith("def g(z):\n    return z\n") for t in mutants)


def test_f_strings_are_never_mutated_inside():
    text = 'def f(n):\n    return f"{n + 1}"\n'
    assert mutation.mutants_of_source(text) == []


@pytest.fixture(scope="module")
def manifest() -> dict:
    return json.loads(mutation.MANIFEST.read_text())


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    return mutation.mutation_tasks()


def test_enumeration_reproduces_the_ids_and_edits_in_the_shipped_manifest(manifest):
    enumerated = {m.id: m for m in mutation.enumerate_mutants()}
    assert len(enumerated) == sum(manifest["enumerated"].values())
    for entry in manifest["mutants"]:
        m = enumerated[entry["id"]]
        assert (m.project, m.file, m.operator) == (entry["project"], entry["file"], entry["operator"])
        assert m.edit == mutation.Edit(entry["start"], entry["end"], entry["new"])
        assert entry["failing"]


def test_mutant_ids_are_unique_and_read_as_project_and_operator(tasks):
    assert len({t.id for t in tasks}) == len(tasks) >= 1000
    for t in tasks:
        assert re.fullmatch(r"mutants/[a-z]+/[a-z_]+-[0-9a-f]{8}", t.id)
        assert t.id.split("/")[2].rsplit("-", 1)[0] == t.metadata["mutant"]["operator"]


def test_all_three_splits_are_used(tasks):
    counts = Counter(t.split for t in tasks)
    assert set(counts) == set(SPLITS) and min(counts.values()) >= 50


def test_all_three_difficulties_are_used(tasks):
    counts = Counter(t.difficulty for t in tasks)
    assert set(counts) == set(DIFFICULTIES) and min(counts.values()) >= 50


def test_difficulty_follows_how_many_tests_fail():
    assert mutation.difficulty_of(8, 24) == "easy"
    assert mutation.difficulty_of(7, 24) == "medium"
    assert mutation.difficulty_of(3, 24) == "medium"
    assert mutation.difficulty_of(2, 24) == "hard"
    assert mutation.difficulty_of(1, 24) == "hard"


def test_every_task_passes_the_taskpack_checks(tasks):
    assert [(t.id, check_task(t)) for t in tasks if check_task(t)] == []
    assert {t.category for t in tasks} == {"python-bugfix"}


def test_instructions_vary_in_wording_and_name_the_project(tasks):
    used = Counter()
    for t in tasks:
        project = t.id.split("/")[1]
        wordings = [w.format(project=project, package=project) for w in mutation.INSTRUCTIONS]
        assert t.instruction in wordings
        used[wordings.index(t.instruction)] += 1
    assert len(used) == len(mutation.INSTRUCTIONS)


def test_the_workspace_is_the_project_with_one_file_changed_and_the_hidden_tests_are_pristine(tasks):
    task = tasks[0]
    project = task.id.split("/")[1]
    pristine = mutation.read_project(mutation.PROJECTS_DIR / project)
    assert set(task.files) == {f"{project}/{path}" for path in pristine}
    assert not any("/hidden/" in path for path in task.files)
    changed = [path for path in pristine if task.files[f"{project}/{path}"] != pristine[path]]
    assert changed == [task.metadata["mutant"]["file"]]
    visible = {p.removeprefix("tests/"): d for p, d in pristine.items() if p.startswith("tests/")}
    hidden = mutation.read_hidden(mutation.PROJECTS_DIR / project)
    assert hidden and task.metadata["tests"] == {**visible, **hidden}
    assert task.metadata["pythonpath"] == [f"/workspace/{project}"]


def test_every_task_of_a_project_is_in_the_same_split_and_no_held_out_function_is_trained_on(tasks):
    split_of_project: dict[str, set[str]] = {}
    for t in tasks:
        split_of_project.setdefault(t.id.split("/")[1], set()).add(t.split)
    assert all(len(found) == 1 for found in split_of_project.values())
    counts = Counter(t.split for t in tasks)
    assert counts["test"] >= 200 and counts["dev"] >= 100 and counts["train"] >= 0.6 * len(tasks)
    # The text of every held-out task's function appears in no training workspace, mutated or not.
    trained = {data for t in tasks if t.split == "train" for data in t.files.values()}
    held_out = set()
    for t in tasks:
        if t.split != "train" and t.metadata["mutant"]["function"] != "<module>":
            tree = ast.parse(original := mutation.original_of(t))
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef) and node.name == t.metadata["mutant"]["function"].split(".")[-1]:
                    held_out.add(ast.get_source_segment(original, node).encode())
    assert len(held_out) >= 20
    assert [f for f in held_out if any(f in data for data in trained)] == []


def collected_ids(tests: dict[str, bytes], root: Path) -> set[str]:
    """The test ids pytest collects from `tests` (the project's package importable from the shipped copy)."""
    (root / "tests").mkdir(parents=True)
    for path, data in tests.items():
        (root / "tests" / path).write_bytes(data)
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "--collect-only",
        "-p",
        "no:cacheprovider",
        "-o",
        "addopts=",
        "tests",
    ]
    env = {**os.environ, "PYTHONPATH": str(mutation.PROJECTS_DIR / root.parent.name)}
    proc = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=60)
    ids = {line for line in proc.stdout.splitlines() if "::" in line}
    assert ids, proc.stdout[-2000:]
    return {i.split("/", 1)[1] for i in ids}


def test_the_hidden_tests_are_a_strict_superset_of_the_visible_ones(tasks, tmp_path):
    for project in sorted({t.id.split("/")[1] for t in tasks}):
        task = next(t for t in tasks if t.id.split("/")[1] == project)
        visible = {p: d for p, d in task.metadata["tests"].items() if task.files.get(f"{project}/tests/{p}") == d}
        assert visible and len(visible) < len(task.metadata["tests"])
        shown = collected_ids(visible, tmp_path / project / "visible")
        hidden = collected_ids(task.metadata["tests"], tmp_path / project / "hidden")
        assert shown < hidden and len(hidden - shown) >= 2, project
        # plain `def test_*` functions: the verifier derives the expected ids from the files' AST
        assert all("[" not in i and i.count("::") == 1 for i in hidden - shown)


def pristine_workspace(project: str, root: Path) -> Path:
    for path, data in mutation.read_project(mutation.PROJECTS_DIR / project).items():
        (root / project / path).parent.mkdir(parents=True, exist_ok=True)
        (root / project / path).write_bytes(data)
    return root


def test_the_original_code_of_every_project_passes_its_hidden_tests(tasks, tmp_path):
    for project in sorted({t.id.split("/")[1] for t in tasks}):
        task = next(t for t in tasks if t.id.split("/")[1] == project)
        workspace = pristine_workspace(project, tmp_path / f"{project}-workspace")
        passed, output = hidden_tests_pass(task, workspace, tmp_path / f"{project}-verify")
        assert passed, output[-2000:]


ALWAYS_EQUAL = """

class AlwaysEqual:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __hash__(self):
        return 0


def ordinal(number):
    return AlwaysEqual()
"""


def test_an_always_equal_result_passes_the_visible_tests_and_fails_the_hidden_ones(tasks, tmp_path):
    task = next(
        t for t in tasks if t.id.startswith("mutants/numerals/") and t.metadata["mutant"]["function"] == "ordinal"
    )
    workspace = pristine_workspace("numerals", tmp_path / "workspace")
    with open(workspace / "numerals" / "numerals" / "bases.py", "a") as f:
        f.write(ALWAYS_EQUAL)
    visible = subprocess.run(
        [sys.executable, "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=workspace / "numerals",
        capture_output=True,
        text=True,
    )
    assert visible.returncode == 0, visible.stdout[-2000:]
    passed, output = hidden_tests_pass(task, workspace, tmp_path / "verify")
    assert not passed and "test_ordinals_like_the_reference FAILED" not in output
    assert "unexpected type AlwaysEqual" in output


def test_tasks_load_from_the_manifest_without_running_tests():
    tasks = mutation.tasks_from_manifest()
    assert [t.id for t in tasks] == [t.id for t in mutation.mutation_tasks()]


def hidden_tests_pass(task: Task, workspace: Path, root: Path) -> tuple[bool, str]:
    """Run the task's hidden tests as the verifier does, against `workspace` standing in for /workspace.

    `-B`: this test runs the tests on the mutant and then on the restored file within a second, which
    would otherwise reuse the mutant's bytecode (same size, same mtime to the second)."""
    (root / "tests").mkdir(parents=True)
    pythonpath = [p.replace("/workspace", str(workspace)) for p in task.metadata["pythonpath"]]
    (root / "conftest.py").write_text(CONFTEST.format(pythonpath=pythonpath))
    for path, data in task.metadata["tests"].items():
        (root / "tests" / path).write_bytes(data)
    command = [sys.executable, "-I", "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "tests"]
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    proc = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode in (0, 1), proc.stdout[-2000:]
    return proc.returncode == 0, proc.stdout


def test_a_kept_mutant_fails_its_hidden_tests_and_its_gold_solution_makes_them_pass(tasks, tmp_path):
    samples = [next(t for t in tasks if t.difficulty == tier) for tier in DIFFICULTIES]
    for n, task in enumerate(samples):
        workspace = tmp_path / f"workspace{n}"
        for path, data in task.files.items():
            (workspace / path).parent.mkdir(parents=True, exist_ok=True)
            (workspace / path).write_bytes(data)
        subprocess.run(["bash", "-c", task.setup], cwd=workspace, check=True, capture_output=True)
        assert subprocess.run(["git", "status", "--porcelain"], cwd=workspace, capture_output=True).stdout == b""
        passed, output = hidden_tests_pass(task, workspace, tmp_path / f"before{n}")
        assert not passed and any(name in output for name in task.metadata["mutant"]["failing"]), task.id
        solution = task.metadata["solution"].replace("cd /workspace/", f"cd {workspace}/")
        subprocess.run(["bash", "-c", solution], cwd=tmp_path, check=True)
        assert hidden_tests_pass(task, workspace, tmp_path / f"after{n}")[0], task.id
        diff = subprocess.run(["git", "diff", "--stat"], cwd=workspace, capture_output=True, text=True).stdout
        assert "1 file changed" in diff


def test_the_gold_demonstration_looks_at_the_tests_then_fixes_only_the_mutated_lines(tasks, tmp_path):
    """The demonstration a model imitates: run the tests, replace the mutated line(s), submit; the
    file it leaves is the original, byte for byte."""
    with_fix = [t for t in tasks if t.metadata["fix"]]
    assert len(with_fix) >= 0.95 * len(tasks)
    for n, task in enumerate(with_fix[:: max(1, len(with_fix) // 12)]):
        workspace = tmp_path / f"w{n}"
        for path, data in task.files.items():
            (workspace / path).parent.mkdir(parents=True, exist_ok=True)
            (workspace / path).write_bytes(data)
        look, fix, submit = TASKPACK.gold(task)
        assert "pytest" in look.arguments["command"] and submit == ToolCall("submit", {})
        assert len(fix.arguments["command"]) < len(task.metadata["solution"])
        subprocess.run(["bash", "-c", fix.arguments["command"].replace("cd /workspace/", f"cd {workspace}/")],
                       check=True)  # fmt: skip
        project = task.metadata["pythonpath"][0].removeprefix("/workspace/")
        changed = (workspace / project / task.metadata["mutant"]["file"]).read_text()
        assert changed == mutation.tasks.original_of(task), task.id


@pytest.fixture(scope="module")
async def pools(podman_url):
    async with PoolSet(size=2, max_active=8) as pools:
        yield pools


@pytest.mark.podman
async def test_probes_score_zero_and_gold_one_in_real_sandboxes(tasks, pools):
    """Replayed as real episodes: a task whose mutant is in a public function (the always-equal
    object passes its visible tests) and one whose mutant is in an internal method."""
    chosen = [
        next(t for t in tasks if t.metadata["mutant"]["function"] == "ordinal"),
        next(t for t in tasks if t.metadata["mutant"]["function"] == "Parser.term"),
    ]
    for task in chosen:
        runs = {"gold": TASKPACK.gold(task)} | {p.name: list(p.calls) for p in mutation_probes(task)}
        scores = {}
        for name, calls in runs.items():
            verdict = await verify_artifact(TASKPACK, task, await replay(TASKPACK, task, calls, pools), pools)
            scores[name] = verdict.reward
        assert scores == {"gold": 1.0, "always-equal": 0.0, "visible-inputs": 0.0}, (task.id, scores)


def test_every_probe_is_one_bash_call_then_submit(tasks):
    for task in tasks[::50]:
        probes = mutation_probes(task)
        assert [p.name for p in probes] == ["always-equal", "visible-inputs"]
        for probe in probes:
            assert [c.name for c in probe.calls] == ["bash", "submit"] and probe.calls[-1] == ToolCall("submit", {})
            assert task.metadata["mutant"]["file"] in probe.calls[0].arguments["command"]


def test_a_stale_manifest_is_an_error_that_says_how_to_rebuild(tmp_path):
    projects = tmp_path / "projects"
    shutil.copytree(mutation.PROJECTS_DIR, projects)
    (projects / "calc" / "calc" / "lexer.py").write_text("# edited\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"stale: projects \['calc'\]") as caught:
        mutation.tasks_from_manifest(mutation.MANIFEST, projects)
    assert "--build" in str(caught.value)


TINY = {
    "tiny/tiny/__init__.py": "def sign(x):\n    if x < 0:\n        return -1\n    return 1\n",
    "tiny/tests/test_tiny.py": (
        "from tiny import sign\n\n\ndef test_negative():\n    assert sign(-5) == -1\n\n\n"
        "def test_positive():\n    assert sign(3) == 1\n"
    ),
}


def test_the_build_keeps_only_mutants_that_some_test_catches_and_writes_the_same_manifest_twice(tmp_path):
    for path, text in TINY.items():
        (tmp_path / "projects" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "projects" / path).write_text(text)
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    data = mutation.build(tmp_path / "projects", first, jobs=2, timeout_s=60)
    mutation.build(tmp_path / "projects", second, jobs=2, timeout_s=60)
    assert first.read_bytes() == second.read_bytes()

    source = TINY["tiny/tiny/__init__.py"]
    kept = {mutation.apply_edit(source, mutation.Edit(m["start"], m["end"], m["new"])): m for m in data["mutants"]}
    assert source.replace("x < 0", "x <= 0") not in kept  # sign(0) is never tested: the mutant survives
    assert (
        data["dropped"] == {"passed": sum(data["enumerated"].values()) - len(kept)} and data["dropped"]["passed"] >= 1
    )
    assert kept[source.replace("x < 0", "x > 0")]["failing"] == ["test_negative", "test_positive"]
    assert kept[source.replace("return -1", "return 1")]["failing"] == ["test_negative"]
    assert data["projects"]["tiny"]["tests"] == 2


def test_the_command_line_prints_a_summary_of_the_manifest(capsys):
    mutation.main([])
    out = capsys.readouterr().out
    assert re.search(r"^\d+ tasks kept of \d+ mutants", out)
    assert "split: dev" in out and "difficulty: easy" in out
