import json
from pathlib import Path


def test_result_json_lists_active_users_over_30():
    result = json.loads(Path("/workspace/result.json").read_text())
    assert result == ["Amara", "Bruno", "Gita", "Ines", "Kemal", "Nils", "Pavel"]
