from pathlib import Path

EXPECTED = [
    "central 6757",
    "east 6242",
    "north 5680",
    "south 5092",
    "west 4942",
]


def test_totals_txt_has_one_sorted_line_per_region():
    lines = [" ".join(line.split()) for line in Path("/workspace/totals.txt").read_text().splitlines() if line.strip()]
    assert lines == EXPECTED
