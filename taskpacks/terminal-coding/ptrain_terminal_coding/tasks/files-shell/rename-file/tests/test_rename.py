from pathlib import Path

CONTENT = """Quarterly report, third quarter
Revenue grew 12% over the second quarter.
Costs stayed flat.
"""


def test_final_txt_has_the_draft_content():
    assert Path("/workspace/final.txt").read_text() == CONTENT


def test_draft_txt_is_gone():
    assert not Path("/workspace/draft.txt").exists()
