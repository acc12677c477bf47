from textstats import top_words, word_counts

# Each value is checked for its exact type before it is compared: an object whose __eq__ always
# says True is not a dict of str to int. A dict subclass (such as collections.Counter) is fine.


def counts(text):
    result = word_counts(text)
    assert isinstance(result, dict)
    plain = dict(result)
    assert all(type(word) is str and type(n) is int for word, n in plain.items())
    return plain


def top(text, n):
    result = top_words(text, n)
    assert type(result) is list
    assert all(type(pair) is tuple and len(pair) == 2 for pair in result)
    assert all(type(word) is str and type(count) is int for word, count in result)
    return result


def test_counts_simple_words():
    assert counts("a b a") == {"a": 2, "b": 1}


def test_ignores_case_and_punctuation():
    assert counts("Hello, hello! HELLO.") == {"hello": 3}


def test_splits_on_newlines_and_tabs():
    assert counts("one\ttwo\nthree  one") == {"one": 2, "two": 1, "three": 1}


def test_top_words():
    assert top("b a c b a b", 2) == [("b", 3), ("a", 2)]


def test_empty_text_has_no_words():
    assert counts("") == {}
    assert counts("  \n\t ") == {}


def test_top_words_breaks_ties_alphabetically():
    assert top("Pear apple. pear, Apple fig", 3) == [("apple", 2), ("pear", 2), ("fig", 1)]


def test_punctuation_only_tokens_are_not_words():
    assert counts("wait -- what ?") == {"wait": 1, "what": 1}


def test_inner_punctuation_stays_in_the_word():
    assert counts("Don't stop; don't!\r\nSTOP.") == {"don't": 2, "stop": 2}
    assert counts("(e-mail) e-mail, Email") == {"e-mail": 2, "email": 1}


def test_top_words_with_more_or_fewer_than_asked():
    assert top("x y z y", 10) == [("y", 2), ("x", 1), ("z", 1)]
    assert top("x y z y", 1) == [("y", 2)]
    assert top("x y z y", 0) == []
    assert top("", 3) == []


def test_counts_add_up_to_the_number_of_words():
    text = "the cat and the hat, and THE bat\nsat"
    result = counts(text)
    assert sum(result.values()) == 9
    assert result["the"] == 3 and result["and"] == 2 and result["sat"] == 1
