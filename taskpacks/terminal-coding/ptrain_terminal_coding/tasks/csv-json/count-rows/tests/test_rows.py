from pathlib import Path


def test_rows_txt_has_the_number_of_data_rows():
    assert Path("/workspace/rows.txt").read_text().strip() == "58"
