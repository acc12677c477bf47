import json
import os
import subprocess

import pytest

ENV = {
    **os.environ,
    "GOCACHE": "/tmp/gocache-td",
    "GOPATH": "/tmp/gopath-td",
    "GOPROXY": "off",
    "GOFLAGS": "-mod=readonly",
}


@pytest.fixture(scope="module")
def exe(tmp_path_factory):
    out = tmp_path_factory.mktemp("bin") / "todo"
    done = subprocess.run(
        ["go", "build", "-o", str(out), "."], cwd="/workspace", env=ENV, capture_output=True, text=True, timeout=200
    )
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture
def todo(exe, tmp_path):
    path = tmp_path / "t.json"

    def run(*args):
        return subprocess.run(
            [str(exe), "-file", str(path), *args], capture_output=True, text=True, cwd=tmp_path, timeout=30
        )

    run.path = path
    return run


def test_add_done_rm_list(todo):
    assert todo("add", "buy", "milk").stdout == "added 1\n"
    assert todo("add", "write report").stdout == "added 2\n"
    assert todo("add", "call bob").stdout == "added 3\n"
    assert todo("done", "2").stdout == "done 2\n"
    assert todo("list").stdout == "1 [ ] buy milk\n3 [ ] call bob\n"
    assert todo("list", "-all").stdout == "1 [ ] buy milk\n2 [x] write report\n3 [ ] call bob\n"
    assert todo("rm", "3").stdout == "removed 3\n"
    assert todo("add", "again").stdout == "added 4\n"
    assert todo("undo", "2").returncode == 0
    assert todo("list").stdout == "1 [ ] buy milk\n2 [ ] write report\n4 [ ] again\n"
    json.loads(todo.path.read_text())


def test_json_output(todo):
    todo("add", "a")
    todo("add", 'quote " and \\ back')
    todo("done", "1")
    assert json.loads(todo("list", "-json").stdout) == [{"id": 2, "text": 'quote " and \\ back', "done": False}]
    assert json.loads(todo("list", "-all", "-json").stdout) == [
        {"id": 1, "text": "a", "done": True},
        {"id": 2, "text": 'quote " and \\ back', "done": False},
    ]
    assert json.loads(todo("list", "-json", "-all").stdout)[0]["done"] is True


def test_errors(todo):
    todo("add", "x")
    out = todo("done", "9")
    assert out.returncode == 1 and out.stderr.strip() == "todo: no task 9"
    out = todo("rm", "9")
    assert out.returncode == 1 and "no task 9" in out.stderr
    for args in (("done",), ("done", "abc"), ("frob",), ()):
        out = todo(*args)
        assert out.returncode == 2 and out.stderr.strip() and out.stdout == "", args
    assert todo("list").stdout == "1 [ ] x\n"


def test_missing_file_is_empty(todo):
    out = todo("list", "-all")
    assert out.returncode == 0 and out.stdout == ""
