from pathlib import Path


def test_version_txt_holds_the_version():
    assert Path("/workspace/version.txt").read_text().strip() == "2.4.1"
