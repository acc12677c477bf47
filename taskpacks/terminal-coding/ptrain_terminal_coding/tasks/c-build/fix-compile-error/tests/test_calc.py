import subprocess

import pytest


def test_make_builds_calc_from_scratch():
    out = subprocess.run(["make", "-B", "-C", "/workspace"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize(
    "args, result",
    [(["add", "2", "3"], "5"), (["add", "-7", "4"], "-3"), (["mul", "4", "5"], "20"), (["pow", "2", "10"], "1024"), (["pow", "3", "0"], "1"), (["pow", "-2", "3"], "-8")],
)
def test_calc_computes(args, result):
    subprocess.run(["make", "-C", "/workspace"], capture_output=True, timeout=120)
    out = subprocess.run(["/workspace/calc", *args], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0
    assert out.stdout.strip() == result
