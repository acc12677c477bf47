import json
from pathlib import Path


def test_counts_json_maps_each_type_to_its_count():
    counts = json.loads(Path("/workspace/counts.json").read_text())
    assert counts == {"click": 9, "view": 14, "purchase": 3, "signup": 5, "logout": 2}
