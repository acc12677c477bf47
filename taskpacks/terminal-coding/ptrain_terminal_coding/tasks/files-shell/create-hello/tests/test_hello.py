from pathlib import Path


def test_hello_txt_holds_the_line():
    assert Path("/workspace/hello.txt").read_text().rstrip("\n") == "Hello, world!"
