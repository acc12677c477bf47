from pathlib import Path

EXPECTED = """Dear Robert,

Thank you for the report. Robert, could you send the final numbers by Friday?
The team says Robert did a great job.

Best regards,
Alice"""


def test_letter_names_robert_everywhere():
    assert Path("/workspace/letter.txt").read_text().rstrip("\n") == EXPECTED
