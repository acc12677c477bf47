from pathlib import Path


def test_count_txt_has_the_number_of_products():
    assert Path("/workspace/count.txt").read_text().strip() == "43"
