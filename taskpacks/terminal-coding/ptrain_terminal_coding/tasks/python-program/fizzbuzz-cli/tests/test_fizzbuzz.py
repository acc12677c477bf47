import subprocess

import pytest


def run(*args):
    return subprocess.run(["python3", "/workspace/fizzbuzz.py", *args], capture_output=True, text=True, timeout=30)


def expected(n):
    out = []
    for i in range(1, n + 1):
        out.append("FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0 else "Buzz" if i % 5 == 0 else str(i))
    return out


@pytest.mark.parametrize("n", [1, 5, 15, 100])
def test_prints_the_sequence(n):
    out = run(str(n))
    assert out.returncode == 0
    assert [line.strip() for line in out.stdout.strip().splitlines()] == expected(n)


@pytest.mark.parametrize("args", [[], ["abc"], ["0"], ["-3"], ["2.5"]])
def test_bad_arguments_exit_2_with_usage_on_stderr(args):
    out = run(*args)
    assert out.returncode == 2
    assert out.stdout.strip() == ""
    assert out.stderr.strip() != ""
