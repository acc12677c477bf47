import json
import os
import subprocess

import pytest


@pytest.fixture
def kv(tmp_path):
    env = dict(os.environ, KV_FILE=str(tmp_path / "store.json"))

    def run(*args):
        return subprocess.run(["python3", "/workspace/kv.py", *args], capture_output=True, text=True, timeout=30, env=env, cwd=tmp_path)

    run.path = tmp_path / "store.json"
    return run


def test_set_then_get(kv):
    assert kv("set", "colour", "blue").returncode == 0
    out = kv("get", "colour")
    assert out.returncode == 0
    assert out.stdout.rstrip("\n") == "blue"


def test_values_may_contain_spaces_and_equals(kv):
    assert kv("set", "greeting", "hello there = friend").returncode == 0
    assert kv("get", "greeting").stdout.rstrip("\n") == "hello there = friend"


def test_set_replaces_and_file_is_a_json_object(kv):
    kv("set", "a", "1")
    kv("set", "a", "2")
    kv("set", "b", "3")
    assert json.loads(kv.path.read_text()) == {"a": "2", "b": "3"}


def test_existing_json_file_is_read(kv):
    kv.path.write_text(json.dumps({"x": "from file"}))
    assert kv("get", "x").stdout.rstrip("\n") == "from file"


def test_get_missing_key_fails(kv):
    out = kv("get", "nope")
    assert out.returncode == 1
    assert out.stderr.strip() != ""
    assert out.stdout.strip() == ""


def test_delete(kv):
    kv("set", "a", "1")
    kv("set", "b", "2")
    assert kv("delete", "a").returncode == 0
    assert kv("get", "a").returncode == 1
    assert json.loads(kv.path.read_text()) == {"b": "2"}
    out = kv("delete", "a")
    assert out.returncode == 1 and out.stderr.strip() != ""


def test_list_is_sorted(kv):
    for key, value in [("zeta", "26"), ("alpha", "1"), ("mid", "m")]:
        kv("set", key, value)
    out = kv("list")
    assert out.returncode == 0
    assert out.stdout.strip().splitlines() == ["alpha=1", "mid=m", "zeta=26"]


def test_list_of_empty_store_prints_nothing(kv):
    out = kv("list")
    assert out.returncode == 0
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("args", [[], ["frobnicate"], ["get"], ["set", "only-key"], ["delete"], ["get", "a", "b"], ["list", "extra"]])
def test_bad_usage_exits_2(kv, args):
    out = kv(*args)
    assert out.returncode == 2
    assert out.stderr.strip() != ""


def test_default_file_is_workspace_kv_json(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "KV_FILE"}
    default = "/workspace/kv.json"
    saved = open(default).read() if os.path.exists(default) else None
    try:
        out = subprocess.run(["python3", "/workspace/kv.py", "set", "probe", "42"], capture_output=True, text=True, timeout=30, env=env, cwd=tmp_path)
        assert out.returncode == 0
        assert json.loads(open(default).read())["probe"] == "42"
    finally:
        if saved is None:
            if os.path.exists(default):
                os.remove(default)
        else:
            open(default, "w").write(saved)
