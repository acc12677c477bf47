from pathlib import Path


def test_output_directory_exists():
    assert Path("/workspace/build/output").is_dir()
