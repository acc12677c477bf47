from pathlib import Path


def test_emails_txt_lists_the_emails_in_order():
    lines = [line.strip() for line in Path("/workspace/emails.txt").read_text().splitlines() if line.strip()]
    assert lines == [
        "ana@example.com",
        "ben.k@example.org",
        "chen@mail.example.net",
        "dmitri@example.com",
        "eva_m@example.org",
        "farid@example.com",
    ]
