import subprocess

import pytest


def run(n, timeout):
    return subprocess.run(["python3", "/workspace/primes.py", str(n)], capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("n, count", [(0, 0), (1, 0), (2, 1), (10, 4), (100, 25), (7919, 1000)])
def test_small_counts(n, count):
    out = run(n, 30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(count)


def test_count_primes_function_is_kept():
    out = subprocess.run(["python3", "-c", "import primes; print(primes.count_primes(1000))"], cwd="/workspace", capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "168"


def test_two_million_within_10_seconds():
    out = run(2000000, 10)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "148933"
