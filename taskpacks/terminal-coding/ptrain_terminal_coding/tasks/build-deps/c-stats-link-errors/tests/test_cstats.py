import random
import statistics
import subprocess

WS = "/workspace"


def make(*args):
    return subprocess.run(["make", "-C", WS, *args], capture_output=True, text=True, timeout=120)


def build():
    make("clean")
    out = make()
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout + out.stderr
    assert "warning" not in text.lower(), text


def run(*args):
    out = subprocess.run([f"{WS}/cstats", *map(str, args)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout


def expected(xs):
    return f"count {len(xs)}\nmean {statistics.fmean(xs):.3f}\nstddev {statistics.pstdev(xs):.3f}\nratio {max(xs) / min(xs):.3f}\n"


def test_builds_cleanly_and_prints_the_example():
    build()
    assert run(2, 4, 4, 4, 5, 5, 7, 9) == "count 8\nmean 5.000\nstddev 2.000\nratio 4.500\n"


def test_random_inputs():
    build()
    r = random.Random(9)
    for _ in range(20):
        xs = [r.randint(1, 1000) / 8 for _ in range(r.randint(1, 40))]
        assert run(*xs) == expected(xs)


def test_verbose_lists_the_values():
    build()
    assert run("-v", 1.5, 3, 6) == "values: 1.5 3 6\n" + expected([1.5, 3, 6])


def test_clean_removes_everything():
    build()
    assert make("clean").returncode == 0
    out = subprocess.run(["bash", "-c", f"ls {WS}/cstats {WS}/src/*.o"], capture_output=True, text=True)
    assert out.stdout.strip() == ""
