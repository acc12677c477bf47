import random
import subprocess


def run(path, timeout):
    return subprocess.run(["python3", "/workspace/dedupe.py", str(path)], capture_output=True, text=True, timeout=timeout)


def reference(lines):
    return list(dict.fromkeys(lines))


def test_small_input_keeps_first_appearance_order(tmp_path):
    lines = ["b", "a", "", "b", "c", "a", "", "d"]
    path = tmp_path / "small.txt"
    path.write_text("\n".join(lines) + "\n")
    out = run(path, 30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == reference(lines)


def test_100k_lines_finish_within_10_seconds(tmp_path):
    r = random.Random(99)
    pool = [f"entry-{r.randint(0, 10**8)}" for _ in range(80000)]
    lines = [r.choice(pool) for _ in range(100000)]
    path = tmp_path / "big.txt"
    path.write_text("\n".join(lines) + "\n")
    out = run(path, 10)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == reference(lines)
