import pytest

from wordwrap import center, indent, justify, table, truncate, wrap


def test_wrap_fills_lines_greedily():
    assert wrap("the quick brown fox jumps", 10) == ["the quick", "brown fox", "jumps"]


def test_wrap_allows_a_line_of_exactly_the_width():
    assert wrap("abcd efgh", 9) == ["abcd efgh"]
    assert wrap("abcd efgh", 8) == ["abcd", "efgh"]


def test_wrap_collapses_whitespace():
    assert wrap("  a   b\n\nc  ", 20) == ["a b c"]


def test_wrap_of_empty_text_has_no_lines():
    assert wrap("", 5) == []
    assert wrap("   ", 5) == []


def test_wrap_splits_words_longer_than_the_width():
    assert wrap("abcdefghij", 4) == ["abcd", "efgh", "ij"]
    assert wrap("xy abcdefgh z", 4) == ["xy", "abcd", "efgh", "z"]


def test_wrap_keeps_a_word_of_exactly_the_width_whole():
    assert wrap("abcd ef", 4) == ["abcd", "ef"]


def test_wrap_needs_a_positive_width():
    with pytest.raises(ValueError):
        wrap("a", 0)
    assert wrap("a b", 1) == ["a", "b"]


def test_justify_spreads_words_to_the_width():
    assert justify("a b c", 9) == "a   b   c"
    assert len(justify("one two three", 20)) == 20


def test_justify_gives_extra_spaces_to_the_left_gaps():
    assert justify("a b c d", 11) == "a   b  c  d"
    assert justify("ab cd ef", 9) == "ab  cd ef"


def test_justify_leaves_a_line_that_fits_exactly():
    assert justify("ab cd", 5) == "ab cd"


def test_justify_pads_a_single_word():
    assert justify("  word ", 6) == "word  "


def test_justify_refuses_a_line_too_long():
    with pytest.raises(ValueError):
        justify("abc def", 6)


def test_center_splits_padding_with_the_extra_on_the_right():
    assert center("ab", 6) == "  ab  "
    assert center("ab", 5) == " ab  "
    assert center("abc", 8, fill="*") == "**abc***"


def test_center_leaves_text_that_is_already_wide_enough():
    assert center("abcdef", 4) == "abcdef"
    assert center("abcd", 4) == "abcd"
    assert center("abc", 4) == "abc "


def test_truncate_keeps_short_text():
    assert truncate("hello", 5) == "hello"
    assert truncate("hello", 9) == "hello"


def test_truncate_marks_the_cut():
    assert truncate("hello world", 8) == "hello..."
    assert truncate("hello world", 7, ellipsis="~") == "hello ~"


def test_truncate_with_a_tiny_limit_shows_part_of_the_ellipsis():
    assert truncate("hello world", 2) == ".."
    assert truncate("hello world", 3) == "..."
    assert truncate("hello world", 4) == "h..."
    assert truncate("hello world", 0) == ""


def test_indent_prefixes_non_blank_lines():
    assert indent("a\n\nb", "> ") == "> a\n\n> b"
    assert indent("a\n   \nb", "  ") == "  a\n   \n  b"


def test_indent_can_use_a_different_first_prefix():
    assert indent("a\nb\nc", "   ", first="1. ") == "1. a\n   b\n   c"
    assert indent("a\nb", "-", first="") == "a\n-b"


def test_table_aligns_text_left_and_numbers_right():
    text = table(["name", "qty"], [["bolt", 12], ["washer", 3]])
    assert text.split("\n") == ["name    qty", "------  ---", "bolt     12", "washer    3"]


def test_table_widens_columns_for_the_header():
    text = table(["item", "count"], [["a", 1]])
    assert text.split("\n") == ["item  count", "----  -----", "a         1"]


def test_table_respects_explicit_alignment():
    text = table(["x", "y"], [["a", "bb"], ["ccc", "d"]], align=["r", "l"])
    assert text.split("\n") == ["  x  y", "---  --", "  a  bb", "ccc  d"]


def test_table_with_no_rows_is_header_and_rule():
    assert table(["a", "bb"], []) == "a  bb\n-  --"


def test_table_treats_a_column_with_any_text_as_text():
    text = table(["k", "v"], [["a", 1], ["b", "x"]])
    assert text.split("\n") == ["k  v", "-  -", "a  1", "b  x"]
