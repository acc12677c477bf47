import re
import subprocess
from pathlib import Path

import pytest

from calc import evaluate

CASES = [
    ("1 + 2 * 3", 7),
    ("(1 + 2) * 3", 9),
    ("10 / 4", 2.5),
    ("2 - 3 - 4", -5),
    ("8 / 2 / 2", 2),
    ("-3 + 5", 2),
    ("-(2 + 3) * 2", -10),
    ("2 * -3", -6),
    ("3.5 * 2", 7),
    ("   7   ", 7),
    ("((4))", 4),
    ("1 - -1", 2),
    ("0.1 + 0.2", 0.3),
    ("2*(3+4)*5-6/3", 68),
    ("100", 100),
    ("1 - 2 + 3", 2),
    ("12 / 3 * 2", 8),
    ("--2", 2),
    ("(1+2)*(3-(4-5))/2", 6),
    ("7 - 2 * 3 + 1", 2),
    ("1.5 + 2.25", 3.75),
    ("-(-(1))", 1),
    ("6 / 4 * 2", 3),
    ("9 - (2 - 3) * 4", 13),
]


@pytest.mark.parametrize("expr, value", CASES)
def test_evaluates(expr, value):
    result = evaluate(expr)
    assert type(result) is float  # an object whose __eq__ always says True is not a float
    assert result == pytest.approx(value)


@pytest.mark.parametrize("expr", ["", "   ", "2 +", "(1", "1)", "1 2", "a + 1", "2 ** 3", "()", "* 2", "1 + (2 * )", "3..4", "4 / (2"])
def test_malformed_input_raises_value_error(expr):
    with pytest.raises(ValueError):
        evaluate(expr)


@pytest.mark.parametrize("expr", ["1 / 0", "1 / (2 - 2)", "5 / (0.0)"])
def test_division_by_zero(expr):
    with pytest.raises(ZeroDivisionError):
        evaluate(expr)


def test_does_not_use_eval_or_ast():
    source = Path("/workspace/calc.py").read_text()
    assert not re.search(r"(?<![.\w])(eval|exec|compile)\s*\(", source)
    assert not re.search(r"^\s*(import|from)\s+ast\b", source, re.M)


def test_command_line_prints_the_result():
    out = subprocess.run(["python3", "/workspace/calc.py", "2 * (3 + 4)"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout.strip()) == 14
