from pathlib import Path

EXPECTED = ["images/photo.raw", "just-over.bin", "logs/old/web-2023.log", "logs/web.log"]


def test_large_txt_lists_the_files_over_10240_bytes():
    lines = [line.strip() for line in Path("/workspace/large.txt").read_text().splitlines() if line.strip()]
    lines = [line[2:] if line.startswith("./") else line for line in lines]
    assert sorted(lines) == EXPECTED
    assert len(lines) == len(EXPECTED)
