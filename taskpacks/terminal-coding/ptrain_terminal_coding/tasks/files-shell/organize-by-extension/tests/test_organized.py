from pathlib import Path

INBOX = Path("/workspace/inbox")
EXPECTED = {
    "txt/todo.txt": "buy milk\n",
    "txt/reminders.txt": "call the bank\n",
    "txt/trip.txt": "ideas for the trip\n",
    "csv/report.csv": "a,b\n1,2\n",
    "csv/data.csv": "x,y\n3,4\n",
    "md/notes.md": "# Title\n",
    "jpg/photo.jpg": "not really a jpeg\n",
}


def test_every_file_is_in_its_extension_directory():
    for rel, content in EXPECTED.items():
        assert (INBOX / rel).read_text() == content, rel


def test_no_files_are_left_at_the_top_or_elsewhere():
    files = sorted(str(p.relative_to(INBOX)) for p in INBOX.rglob("*") if p.is_file())
    assert files == sorted(EXPECTED)
