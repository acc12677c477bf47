import pytest

from numerals import digit_sum, from_base, from_roman, group_digits, ordinal, to_base, to_roman


def test_to_roman_of_simple_numbers():
    assert to_roman(1) == "I"
    assert to_roman(3) == "III"
    assert to_roman(8) == "VIII"
    assert to_roman(2000) == "MM"


def test_to_roman_uses_subtractive_pairs():
    assert to_roman(4) == "IV"
    assert to_roman(9) == "IX"
    assert to_roman(40) == "XL"
    assert to_roman(90) == "XC"
    assert to_roman(400) == "CD"
    assert to_roman(900) == "CM"


def test_to_roman_of_larger_numbers():
    assert to_roman(1994) == "MCMXCIV"
    assert to_roman(3999) == "MMMCMXCIX"
    assert to_roman(444) == "CDXLIV"
    assert to_roman(1666) == "MDCLXVI"


def test_to_roman_refuses_numbers_out_of_range():
    for bad in (0, -5, 4000):
        with pytest.raises(ValueError):
            to_roman(bad)


def test_to_roman_refuses_non_integers():
    with pytest.raises(TypeError):
        to_roman(2.0)
    with pytest.raises(TypeError):
        to_roman(True)


def test_from_roman_reads_numerals():
    assert from_roman("MCMXCIV") == 1994
    assert from_roman("iii") == 3
    assert from_roman(" XLII ") == 42
    assert from_roman("MMMCMXCIX") == 3999
    assert from_roman("I") == 1


def test_from_roman_round_trips_every_number():
    assert all(from_roman(to_roman(n)) == n for n in range(1, 4000))


def test_from_roman_refuses_bad_letters_and_empty_text():
    for bad in ("", "  ", "ABC", "X1"):
        with pytest.raises(ValueError):
            from_roman(bad)


def test_from_roman_refuses_malformed_numerals():
    for bad in ("IIII", "IC", "VX", "IIV", "MMMM"):
        with pytest.raises(ValueError, match="malformed"):
            from_roman(bad)


def test_to_base_in_common_bases():
    assert to_base(255, 16) == "ff"
    assert to_base(255, 2) == "11111111"
    assert to_base(8, 8) == "10"
    assert to_base(35, 36) == "z"
    assert to_base(36, 36) == "10"


def test_to_base_of_zero_and_negative_numbers():
    assert to_base(0, 7) == "0"
    assert to_base(-10, 2) == "-1010"


def test_base_must_be_between_2_and_36():
    for bad in (1, 37, 0):
        with pytest.raises(ValueError):
            to_base(10, bad)
        with pytest.raises(ValueError):
            from_base("1", bad)
    assert to_base(3, 2) == "11"
    assert from_base("z", 36) == 35


def test_from_base_reads_digits():
    assert from_base("ff", 16) == 255
    assert from_base("FF", 16) == 255
    assert from_base("777", 8) == 511
    assert from_base(" -101 ", 2) == -5
    assert from_base("0", 10) == 0


def test_from_base_refuses_digits_outside_the_base():
    with pytest.raises(ValueError, match="'2' is not a digit in base 2"):
        from_base("102", 2)
    with pytest.raises(ValueError):
        from_base("g", 16)
    with pytest.raises(ValueError):
        from_base("1.5", 10)


def test_from_base_refuses_text_without_digits():
    with pytest.raises(ValueError):
        from_base("", 10)
    with pytest.raises(ValueError):
        from_base("-", 10)


def test_to_base_and_from_base_round_trip():
    for base in (2, 3, 10, 16, 36):
        for n in (-1000, -1, 1, 9, 10, 11, 12345):
            assert from_base(to_base(n, base), base) == n


def test_group_digits_in_threes_from_the_right():
    assert group_digits(1234567) == "1,234,567"
    assert group_digits(123456) == "123,456"
    assert group_digits(12345) == "12,345"
    assert group_digits(999) == "999"
    assert group_digits(1000) == "1,000"
    assert group_digits(0) == "0"


def test_group_digits_with_other_sizes_and_separators():
    assert group_digits(12345678, size=4, separator=" ") == "1234 5678"
    assert group_digits(-1234567, separator=".") == "-1.234.567"
    assert group_digits(123456, size=2) == "12,34,56"


def test_digit_sum():
    assert digit_sum(12345) == 15
    assert digit_sum(-99) == 18
    assert digit_sum(0) == 0
    assert digit_sum(255, base=16) == 30
    assert digit_sum(7, base=2) == 3


def test_ordinals():
    assert [ordinal(n) for n in (1, 2, 3, 4, 10)] == ["1st", "2nd", "3rd", "4th", "10th"]
    assert [ordinal(n) for n in (11, 12, 13, 20)] == ["11th", "12th", "13th", "20th"]
    assert [ordinal(n) for n in (21, 22, 23, 101, 111, 112)] == ["21st", "22nd", "23rd", "101st", "111th", "112th"]
