import pytest

from roman import from_roman, to_roman


@pytest.mark.parametrize(
    "n, s",
    [(1, "I"), (4, "IV"), (9, "IX"), (14, "XIV"), (40, "XL"), (90, "XC"), (400, "CD"), (1994, "MCMXCIV"), (2024, "MMXXIV"), (3999, "MMMCMXCIX")],
)
def test_known_values(n, s):
    assert type(to_roman(n)) is str and type(from_roman(s)) is int  # not an object equal to everything
    assert to_roman(n) == s
    assert from_roman(s) == n


def test_round_trip_for_every_number():
    numerals = set()
    for n in range(1, 4000):
        s = to_roman(n)
        assert type(s) is str and s and set(s) <= set("IVXLCDM")
        back = from_roman(s)
        assert type(back) is int
        assert back == n
        numerals.add(s)
    assert len(numerals) == 3999


@pytest.mark.parametrize("n", [0, -1, 4000])
def test_to_roman_rejects_out_of_range(n):
    with pytest.raises(ValueError):
        to_roman(n)


@pytest.mark.parametrize("s", ["", "IIII", "VV", "IC", "MMMM", "ABC", "XIIX", "VX", "LL", "DD"])
def test_from_roman_rejects_non_canonical(s):
    with pytest.raises(ValueError):
        from_roman(s)
