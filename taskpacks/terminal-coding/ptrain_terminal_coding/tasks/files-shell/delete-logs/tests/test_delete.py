from pathlib import Path

KEPT = {
    "notes.txt": "Remember to rotate the logs.\n",
    "data.csv": "id,value\n1,10\n2,20\n",
    "log.txt": "The .log files are temporary.\n",
    "changelog.md": "keep me\n",
}


def test_no_log_files_are_left():
    assert sorted(p.name for p in Path("/workspace").glob("*.log")) == []


def test_other_files_are_untouched():
    for name, content in KEPT.items():
        assert Path("/workspace", name).read_text() == content, name
