from pathlib import Path

EXPECTED = {
    "billing+partners@northwind.example",
    "legal@contoso.example",
    "li.wei@fabrikam.example",
    "m.kowalska@adatum.example",
    "marta_k@old-mail.example",
    "ops-team@woodgrove.example",
    "priya.shah@northwind.example",
    "tomas@contoso.example",
}


def read_lines():
    return [line.strip() for line in Path("/workspace/emails.txt").read_text().splitlines() if line.strip()]


def test_emails_txt_has_each_address_once():
    lines = read_lines()
    assert set(lines) == EXPECTED
    assert len(lines) == len(EXPECTED)


def test_emails_txt_is_sorted():
    lines = read_lines()
    assert lines == sorted(lines) or lines == sorted(lines, key=lambda s: "".join(c for c in s if c.isalnum()))
