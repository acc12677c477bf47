from pathlib import Path


def test_top_txt_lists_the_three_biggest_customers():
    lines = [[field.strip() for field in line.split("|")] for line in Path("/workspace/top.txt").read_text().splitlines() if line.strip()]
    assert lines == [["Cyberdyne", "10823"], ["Acme Corp", "8855"], ["Initech", "8461"]]
