from pathlib import Path


def test_unique_txt_has_each_color_once_in_order():
    lines = [line.strip() for line in Path("/workspace/unique.txt").read_text().splitlines() if line.strip()]
    assert lines == ["blue", "cyan", "green", "orange", "purple", "red", "yellow"]
