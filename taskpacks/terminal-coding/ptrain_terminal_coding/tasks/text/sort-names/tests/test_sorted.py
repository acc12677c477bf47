from pathlib import Path

NAMES = "Oliver Amelia Henry Charlotte Lucas Isla Mateo Zoe Benjamin Freya Noah Ruby Theodore Grace Elijah Mia Kai Violet Jasper Daisy".split()


def test_sorted_txt_has_the_names_in_order():
    lines = [line.strip() for line in Path("/workspace/sorted.txt").read_text().splitlines() if line.strip()]
    assert lines == sorted(NAMES)
