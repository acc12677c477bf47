from pathlib import Path

EXPECTED = [
    "/health 30 3 348",
    "/api/users 23 2 527",
    "/api/items 17 4 387",
    "/api/orders 17 2 493",
    "/api/search 12 2 517",
    "/login 9 1 476",
    "/static/app.js 5 2 482",
]


def test_report_has_one_line_per_endpoint_in_order():
    lines = [" ".join(line.split()) for line in Path("/workspace/report.txt").read_text().splitlines() if line.strip()]
    assert lines == EXPECTED
