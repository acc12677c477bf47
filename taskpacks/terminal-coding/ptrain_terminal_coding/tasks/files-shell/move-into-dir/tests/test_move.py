from pathlib import Path


def test_notes_are_in_the_archive():
    assert Path("/workspace/archive/notes.txt").read_text() == "Meeting moved to Thursday.\nBring the slides.\n"


def test_notes_are_no_longer_at_the_top():
    assert not Path("/workspace/notes.txt").exists()


def test_archive_keeps_its_other_files():
    assert Path("/workspace/archive/march.txt").read_text() == "Old notes from March.\n"
