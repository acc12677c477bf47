import os
import random
import shutil
import subprocess

import pytest

MANIFEST = '[package]\nname = "rcalc"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'


@pytest.fixture(scope="module")
def exe(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rcalc")
    crate = tmp / "crate"
    crate.mkdir()
    shutil.copytree("/workspace/src", crate / "src", symlinks=True)
    (crate / "Cargo.toml").write_text(MANIFEST)
    env = {
        **os.environ,
        "CARGO_HOME": str(tmp / "home"),
        "CARGO_TARGET_DIR": str(tmp / "target"),
        "CARGO_NET_OFFLINE": "true",
    }
    out = subprocess.run(
        ["cargo", "build", "--offline"], cwd=crate, env=env, capture_output=True, text=True, timeout=240
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return tmp / "target/debug/rcalc"


def fmt(v):
    if v == int(v):
        return str(int(v))
    return repr(v)


def run(exe, *args, stdin=None):
    return subprocess.run([str(exe), *args], input=stdin, capture_output=True, text=True, timeout=30)


CASES = {
    "10 - 3 - 2": "5", "8 / 4 / 2": "1", "-3 + 5": "2", "2 ^ 3 ^ 2": "512", "-2 ^ 2": "-4", "2 * 3 + 4 * 5": "26",
    "(1 + 2) * 3": "9", "7 / 2": "3.5", ".5 + .25": "0.75", "2^-1": "0.5", "- -3": "3", "+4 * -2": "-8",
    "  ( ( 2 ) )  ": "2", "1 - 2 * 3 ^ 2": "-17", "0 * -1": "0", "2 ^ 0.5 ^ 2": fmt(2 ** 0.25), "10 / 4 * 2": "5",
    "1 / 3": repr(1 / 3), "100 - 10 - 10 - 10": "70",
}  # fmt: skip


def test_reported_cases(exe):
    for expr, want in CASES.items():
        out = run(exe, expr)
        assert (out.returncode, out.stdout.strip()) == (0, want), expr


def test_errors_are_lines_and_exit_status(exe):
    lines = ["1 + 1", "1 / 0", "2 +", "(1", "abc", "1 2", "3 * 3", "4 / (2 - 2)"]
    out = run(exe, stdin="\n".join(lines) + "\n")
    assert out.returncode == 1 and "panicked" not in out.stderr
    got = out.stdout.splitlines()
    assert len(got) == 8 and got[0] == "2" and got[6] == "9"
    assert got[1] == "error: division by zero" and got[7] == "error: division by zero"
    assert all(g.startswith("error:") for g in got[2:6]), got


def test_random_expressions(exe):
    r = random.Random(4)

    def gen(depth):
        if depth == 0 or r.random() < 0.3:
            return str(r.randint(1, 9))
        op = r.choice(["+", "-", "*", "/", "+", "-"])
        left, right = gen(depth - 1), gen(depth - 1)
        if r.random() < 0.3:
            return f"({left} {op} {right})"
        return f"{left} {op} {right}"

    exprs = []
    while len(exprs) < 200:
        e = gen(4)
        try:
            v = eval(e)
        except ZeroDivisionError:
            continue
        exprs.append((e, v))
    out = run(exe, stdin="\n".join(e for e, _ in exprs) + "\n")
    assert out.returncode == 0, out.stdout[-500:]
    got = out.stdout.splitlines()
    for (e, v), g in zip(exprs, got, strict=True):
        assert abs(float(g) - v) <= 1e-9 * max(1, abs(v)), (e, g, v)
