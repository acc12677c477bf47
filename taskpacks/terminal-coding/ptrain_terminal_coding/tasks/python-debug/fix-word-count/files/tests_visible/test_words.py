from textstats import top_words, word_counts


def test_counts_simple_words():
    assert word_counts("a b a") == {"a": 2, "b": 1}


def test_ignores_case_and_punctuation():
    assert word_counts("Hello, hello! HELLO.") == {"hello": 3}


def test_splits_on_newlines_and_tabs():
    assert word_counts("one\ttwo\nthree  one") == {"one": 2, "two": 1, "three": 1}


def test_top_words():
    assert top_words("b a c b a b", 2) == [("b", 3), ("a", 2)]
