from pathlib import Path


def test_top_txt_has_the_three_busiest_ips():
    lines = [line.split() for line in Path("/workspace/top.txt").read_text().splitlines() if line.strip()]
    assert lines == [["31", "10.0.0.5"], ["24", "192.168.1.20"], ["17", "172.16.4.2"]]
