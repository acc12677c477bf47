from pathlib import Path

EXPECTED = [
    "10:35:17 GET /api/cart 200 196ms",
    "10:36:14 GET /login 200 92ms",
    "10:37:09 GET /login 200 8ms",
    "10:38:31 GET /static/app.css 200 136ms",
    "10:39:18 GET / 200 216ms",
]


def test_tail_txt_has_the_last_five_lines():
    lines = [line for line in Path("/workspace/tail.txt").read_text().splitlines() if line.strip()]
    assert lines == EXPECTED
