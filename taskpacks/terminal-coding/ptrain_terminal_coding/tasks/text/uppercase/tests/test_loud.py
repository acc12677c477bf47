from pathlib import Path


def test_loud_txt_is_the_upper_case_text():
    text = Path("/workspace/loud.txt").read_text().rstrip("\n")
    assert text == "PLEASE KEEP THE NOISE DOWN,\nTHE BABY IS SLEEPING.\nTHANK YOU!"
