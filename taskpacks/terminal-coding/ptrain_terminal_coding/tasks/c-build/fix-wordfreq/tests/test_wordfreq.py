import random
import re
import subprocess
from collections import Counter

import pytest


@pytest.fixture(scope="module", autouse=True)
def build():
    out = subprocess.run(["make", "-B", "-C", "/workspace"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def reference(text, n=10):
    counts = Counter(w.lower() for w in re.findall(r"[A-Za-z]+", text))
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]
    return [f"{count} {word}" for word, count in ranked]


def wordfreq(text, *args):
    out = subprocess.run(["/workspace/wordfreq", *args], input=text.encode(), capture_output=True, timeout=30)
    assert out.returncode == 0
    return out.stdout.decode().splitlines()


def test_last_word_without_trailing_newline_counts():
    assert wordfreq("the cat and the hat") == ["2 the", "1 and", "1 cat", "1 hat"]


def test_ties_are_alphabetical():
    assert wordfreq("pear fig apple fig pear apple kiwi\n") == ["2 apple", "2 fig", "2 pear", "1 kiwi"]


def test_prints_at_most_n_lines():
    assert wordfreq("a b c d e f a b c a b a\n", "2") == ["4 a", "3 b"]
    assert len(wordfreq(" ".join(f"w{chr(97 + i)}x" for i in range(20)))) == 10


def test_case_and_punctuation():
    text = "Hello, hello! HELLO world.\nIt's 2024: the world-wide web."
    assert wordfreq(text) == reference(text)


def test_empty_input_prints_nothing():
    assert wordfreq("") == []
    assert wordfreq("123 ... !!!\n") == []


def test_random_texts_match_the_reference():
    r = random.Random(5)
    vocab = ["alpha", "Beta", "gamma", "delta", "EPSILON", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu"]
    for trial in range(20):
        words = [r.choice(vocab) for _ in range(r.randint(1, 200))]
        seps = [r.choice([" ", "\n", ", ", ". ", "  ", "-", "3"]) for _ in words]
        text = "".join(w + s for w, s in zip(words, seps))
        if trial % 2:
            text = text.rstrip(" \n,.-3")
        n = r.randint(1, 12)
        assert wordfreq(text, str(n)) == reference(text, n), text
