import string


def normalize(word):
    """Lower-case a word and strip punctuation from both ends."""
    return word.strip(string.punctuation)


def word_counts(text):
    """Count words in `text`, case-insensitively, ignoring surrounding punctuation.

    Words are separated by any whitespace (spaces, tabs, newlines)."""
    counts = {}
    for raw in text.split(" "):
        word = normalize(raw)
        if word:
            counts[word] = counts.get(word, 0) + 1
    return counts


def top_words(text, n):
    """The `n` most common words as (word, count) pairs, most common first; ties in
    alphabetical order."""
    counts = word_counts(text)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]
