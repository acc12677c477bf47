from pathlib import Path


def test_first_txt_holds_the_first_line():
    assert Path("/workspace/first.txt").read_text().rstrip("\n") == "The fog comes on little cat feet."
