from textstats import top_words, word_counts


def test_counts_simple_words():
    assert word_counts("a b a") == {"a": 2, "b": 1}


def test_ignores_case_and_punctuation():
    assert word_counts("Hello, hello! HELLO.") == {"hello": 3}


def test_splits_on_newlines_and_tabs():
    assert word_counts("one\ttwo\nthree  one") == {"one": 2, "two": 1, "three": 1}


def test_top_words():
    assert top_words("b a c b a b", 2) == [("b", 3), ("a", 2)]


def test_empty_text_has_no_words():
    assert word_counts("") == {}
    assert word_counts("  \n\t ") == {}


def test_top_words_breaks_ties_alphabetically():
    assert top_words("Pear apple. pear, Apple fig", 3) == [("apple", 2), ("pear", 2), ("fig", 1)]


def test_punctuation_only_tokens_are_not_words():
    assert word_counts("wait -- what ?") == {"wait": 1, "what": 1}
