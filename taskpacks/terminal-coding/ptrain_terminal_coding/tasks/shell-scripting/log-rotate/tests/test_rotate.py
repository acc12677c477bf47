import subprocess

import pytest


def rotate(*args, cwd=None):
    return subprocess.run(["bash", "/workspace/rotate.sh", *map(str, args)], capture_output=True, text=True, timeout=30, cwd=cwd)


def names(directory):
    return sorted(p.name for p in directory.iterdir())


def test_single_rotation(tmp_path):
    log = tmp_path / "app.log"
    log.write_text("first\n")
    out = rotate(log)
    assert out.returncode == 0, out.stderr
    assert out.stdout == ""
    assert log.read_text() == ""
    assert (tmp_path / "app.log.1").read_text() == "first\n"
    assert names(tmp_path) == ["app.log", "app.log.1"]


def test_repeated_rotation_keeps_three_by_default(tmp_path):
    log = tmp_path / "app.log"
    for i in range(1, 6):
        log.write_text(f"generation {i}\n")
        assert rotate(log).returncode == 0
    assert names(tmp_path) == ["app.log", "app.log.1", "app.log.2", "app.log.3"]
    assert (tmp_path / "app.log.1").read_text() == "generation 5\n"
    assert (tmp_path / "app.log.2").read_text() == "generation 4\n"
    assert (tmp_path / "app.log.3").read_text() == "generation 3\n"
    assert log.read_text() == ""


def test_keep_argument(tmp_path):
    log = tmp_path / "svc.log"
    for i in range(1, 8):
        log.write_text(f"g{i}\n")
        assert rotate(log, 5).returncode == 0
    assert names(tmp_path) == ["svc.log"] + [f"svc.log.{n}" for n in range(1, 6)]
    assert [(tmp_path / f"svc.log.{n}").read_text() for n in range(1, 6)] == ["g7\n", "g6\n", "g5\n", "g4\n", "g3\n"]


def test_keep_one(tmp_path):
    log = tmp_path / "a.log"
    log.write_text("old\n")
    (tmp_path / "a.log.1").write_text("older\n")
    assert rotate(log, 1).returncode == 0
    assert names(tmp_path) == ["a.log", "a.log.1"]
    assert (tmp_path / "a.log.1").read_text() == "old\n"


def test_copies_beyond_keep_are_deleted_and_others_untouched(tmp_path):
    log = tmp_path / "web.log"
    log.write_text("now\n")
    for name in ["web.log.2", "web.log.7", "web.log.12", "web.log.bak", "web.log.1x", "web.logger", "other.log.4"]:
        (tmp_path / name).write_text(name + "\n")
    assert rotate(log).returncode == 0
    assert names(tmp_path) == sorted(["web.log", "web.log.1", "web.log.3", "web.log.bak", "web.log.1x", "web.logger", "other.log.4"])
    assert (tmp_path / "web.log.3").read_text() == "web.log.2\n"
    assert (tmp_path / "web.log.1").read_text() == "now\n"


def test_relative_path_with_spaces(tmp_path):
    folder = tmp_path / "my logs"
    folder.mkdir()
    (folder / "my app.log").write_text("x\n")
    out = rotate("my logs/my app.log", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert names(folder) == ["my app.log", "my app.log.1"]
    assert (folder / "my app.log.1").read_text() == "x\n"


def test_missing_file_is_an_error(tmp_path):
    out = rotate(tmp_path / "nope.log")
    assert out.returncode == 1
    assert out.stderr.strip() != ""
    assert names(tmp_path) == []


def test_directory_is_not_a_log_file(tmp_path):
    (tmp_path / "dir.log").mkdir()
    out = rotate(tmp_path / "dir.log")
    assert out.returncode == 1
    assert out.stderr.strip() != ""


@pytest.mark.parametrize("keep", ["0", "-2", "abc", "2.5", ""])
def test_bad_keep_is_a_usage_error(tmp_path, keep):
    log = tmp_path / "app.log"
    log.write_text("keep me\n")
    out = rotate(log, keep)
    assert out.returncode == 2
    assert out.stderr.strip() != ""
    assert names(tmp_path) == ["app.log"]
    assert log.read_text() == "keep me\n"
