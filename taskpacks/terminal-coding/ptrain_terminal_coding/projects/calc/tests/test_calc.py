import pytest

from calc import CalcError, Token, evaluate, tokenize


def kinds(text):
    return [(t.kind, t.text) for t in tokenize(text)]


def test_tokenize_splits_numbers_operators_and_names():
    assert kinds("12+x") == [("number", "12"), ("op", "+"), ("name", "x"), ("end", "")]


def test_tokenize_skips_whitespace_and_records_positions():
    assert tokenize(" 7 * y") == [
        Token("number", "7", 1),
        Token("op", "*", 3),
        Token("name", "y", 5),
        Token("end", "", 6),
    ]


def test_tokenize_reads_decimals_and_names_with_digits():
    assert kinds("3.25*rate_2") == [("number", "3.25"), ("op", "*"), ("name", "rate_2"), ("end", "")]


def test_tokenize_stops_a_number_at_its_second_dot():
    assert kinds("1.2.3")[:2] == [("number", "1.2"), ("number", ".3")]


def test_tokenize_reads_a_leading_dot_number_and_underscore_names():
    assert kinds(".5+_a") == [("number", ".5"), ("op", "+"), ("name", "_a"), ("end", "")]


def test_tokenize_rejects_unknown_characters_and_lonely_dots():
    with pytest.raises(SyntaxError, match="at 2"):
        tokenize("1 $ 2")
    with pytest.raises(SyntaxError):
        tokenize("1 + .")


def test_tokenize_of_empty_text_is_just_the_end():
    assert tokenize("") == [Token("end", "", 0)]


def test_numbers_evaluate_to_ints_or_floats():
    assert evaluate("42") == 42
    assert isinstance(evaluate("42"), int)
    assert evaluate("2.5") == 2.5


def test_addition_and_subtraction_go_left_to_right():
    assert evaluate("10 - 3 - 2") == 5
    assert evaluate("1 + 2 + 3") == 6
    assert evaluate("10 - 3 + 2") == 9


def test_multiplication_binds_tighter_than_addition():
    assert evaluate("2 + 3 * 4") == 14
    assert evaluate("2 * 3 + 4") == 10


def test_division_and_modulo():
    assert evaluate("7 / 2") == 3.5
    assert evaluate("7 % 4") == 3
    assert evaluate("20 / 2 / 5") == 2
    assert evaluate("2 * 9 % 4") == 2


def test_division_or_modulo_by_zero_is_an_error():
    with pytest.raises(CalcError, match="division by zero"):
        evaluate("1 / 0")
    with pytest.raises(CalcError, match="division by zero"):
        evaluate("1 % (2 - 2)")


def test_multiplying_by_zero_is_fine():
    assert evaluate("5 * 0") == 0


def test_parentheses_group():
    assert evaluate("(2 + 3) * 4") == 20
    assert evaluate("((1))") == 1


def test_unary_minus():
    assert evaluate("-3") == -3
    assert evaluate("--3") == 3
    assert evaluate("2 - -3") == 5
    assert evaluate("-2 * 3") == -6


def test_power_is_right_associative_and_binds_tighter_than_minus():
    assert evaluate("2 ^ 3 ^ 2") == 512
    assert evaluate("-2 ^ 2") == -4
    assert evaluate("2 ^ -1") == 0.5
    assert evaluate("3 * 2 ^ 2") == 12


def test_variables_are_looked_up():
    assert evaluate("x * y + 1", {"x": 3, "y": 4}) == 13


def test_an_unknown_variable_is_an_error():
    with pytest.raises(CalcError, match="unknown variable 'z'"):
        evaluate("z + 1", {"x": 1})


def test_functions_take_one_or_more_arguments():
    assert evaluate("abs(-4)") == 4
    assert evaluate("sqrt(16)") == 4
    assert evaluate("max(1, 7, 3)") == 7
    assert evaluate("min(5, 2 + 1)") == 3


def test_functions_can_nest_and_mix_with_operators():
    assert evaluate("1 + max(2, abs(-9)) * 2") == 19


def test_an_unknown_function_is_an_error():
    with pytest.raises(CalcError, match="unknown function 'cos'"):
        evaluate("cos(0)")


def test_a_missing_closing_parenthesis_is_an_error():
    with pytest.raises(CalcError, match=r"expected '\)'"):
        evaluate("(1 + 2")


def test_trailing_input_is_an_error():
    with pytest.raises(CalcError, match="trailing input at 2"):
        evaluate("1 2")


def test_a_dangling_operator_is_an_error():
    with pytest.raises(CalcError, match="unexpected 'end'"):
        evaluate("1 +")
    with pytest.raises(CalcError, match="unexpected '\\*' at 0"):
        evaluate("* 2")
