from pathlib import Path


def test_ready_is_an_empty_file():
    ready = Path("/workspace/READY")
    assert ready.is_file()
    assert ready.stat().st_size == 0
