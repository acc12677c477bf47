from pathlib import Path


def test_listing_names_every_file_in_order():
    lines = [line.strip() for line in Path("/workspace/listing.txt").read_text().splitlines() if line.strip()]
    assert lines == ["app.js", "config.yaml", "main.py", "readme.md", "utils.py"]
