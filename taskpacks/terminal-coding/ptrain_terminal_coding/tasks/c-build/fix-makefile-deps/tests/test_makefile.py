import os
import subprocess
import time
from pathlib import Path

WS = Path("/workspace")


def make(*args):
    return subprocess.run(["make", "-C", "/workspace", *args], capture_output=True, text=True, timeout=120)


def fresh_build():
    out = make("clean")
    assert out.returncode == 0, out.stdout + out.stderr
    assert not (WS / "stackcalc").exists()
    out = make()
    assert out.returncode == 0, out.stdout + out.stderr


def test_make_builds_a_working_stackcalc():
    fresh_build()
    run = subprocess.run(["/workspace/stackcalc", "3 4 + 2 *"], capture_output=True, text=True, timeout=30)
    assert run.stdout.strip() == "14"
    run = subprocess.run(["/workspace/stackcalc", "5 1 2 + 4 * + 3 -"], capture_output=True, text=True, timeout=30)
    assert run.stdout.strip() == "14"


def test_objects_go_to_build_and_clean_removes_them():
    fresh_build()
    objects = sorted(p.name for p in (WS / "build").glob("*.o"))
    assert objects == ["main.o", "rpn.o", "stack.o"]
    assert make("clean").returncode == 0
    assert not (WS / "stackcalc").exists()
    assert not list(WS.glob("build/*.o"))


def test_make_test_runs_the_self_test():
    make("clean")
    out = make("test")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "self-test passed" in out.stdout


def test_up_to_date_build_does_nothing_then_header_change_rebuilds():
    fresh_build()
    assert make("-q", "stackcalc").returncode == 0
    now = time.time()
    for path in [*WS.glob("src/*"), WS / "Makefile"]:
        os.utime(path, (now - 120, now - 120))
    for path in [*WS.glob("build/*"), WS / "stackcalc"]:
        os.utime(path, (now - 60, now - 60))
    os.utime(WS / "src" / "stack.h", (now - 1, now - 1))
    assert make("-q", "stackcalc").returncode == 1
    for obj in ("main.o", "stack.o", "rpn.o"):
        assert make("-q", f"build/{obj}").returncode == 1, f"build/{obj} should depend on src/stack.h"
    out = make()
    assert out.returncode == 0, out.stdout + out.stderr
    assert make("-q", "stackcalc").returncode == 0
