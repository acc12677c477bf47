from pathlib import Path

EXPECTED = [
    "2024-06-01 09:02:40 ERROR failed to send email to user 42",
    "2024-06-01 09:04:19 ERROR timeout while calling payment service",
    "2024-06-01 09:07:45 ERROR disk usage at 95%",
]


def test_errors_txt_has_exactly_the_error_lines():
    lines = [line for line in Path("/workspace/errors.txt").read_text().splitlines() if line.strip()]
    assert lines == EXPECTED
