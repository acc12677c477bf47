import zlib

import pytest

from squash import adler32, lz_compress, lz_decompress, rle_decode, rle_encode, runs


def test_runs_groups_equal_neighbours():
    assert runs("aaabccdddd") == [("a", 3), ("b", 1), ("c", 2), ("d", 4)]
    assert runs("abab") == [("a", 1), ("b", 1), ("a", 1), ("b", 1)]
    assert runs("") == []


def test_rle_encode_writes_count_then_character():
    assert rle_encode("aaab") == "3a1b"
    assert rle_encode("x") == "1x"
    assert rle_encode("") == ""


def test_rle_encode_splits_long_runs():
    assert rle_encode("a" * 12) == "9a3a"
    assert rle_encode("a" * 9) == "9a"
    assert rle_encode("a" * 18) == "9a9a"
    assert rle_encode("bbbbb", max_run=2) == "2b2b1b"


def test_rle_encode_refuses_digits():
    with pytest.raises(ValueError):
        rle_encode("a1")


def test_rle_decode_expands_runs():
    assert rle_decode("3a1b") == "aaab"
    assert rle_decode("12z") == "z" * 12
    assert rle_decode("") == ""


def test_rle_decode_refuses_a_character_without_count():
    with pytest.raises(ValueError, match="has no count"):
        rle_decode("3ab")


def test_rle_decode_refuses_a_trailing_count():
    with pytest.raises(ValueError, match="ends with a count"):
        rle_decode("3a4")


def test_rle_round_trips():
    for text in ("", "a", "hello   world", "zzzzzzzzzzzzzzzzzzzzzz!", "ab" * 10):
        assert rle_decode(rle_encode(text)) == text


def test_adler32_matches_zlib():
    for data in (b"", b"a", b"Wikipedia", bytes(range(256)) * 300):
        assert adler32(data) == zlib.adler32(data)


def test_adler32_of_known_values():
    assert adler32(b"") == 1
    assert adler32(b"Wikipedia") == 0x11E60398


def test_lz_compress_of_text_without_repeats_is_literals():
    assert lz_compress("abc") == [(0, 0, "a"), (0, 0, "b"), (0, 0, "c")]


def test_lz_compress_finds_a_repeat():
    assert lz_compress("abcabcx") == [(0, 0, "a"), (0, 0, "b"), (0, 0, "c"), (3, 3, "x")]


def test_lz_compress_uses_overlapping_matches_for_runs():
    assert lz_compress("aaaaaa") == [(0, 0, "a"), (1, 4, "a")]


def test_lz_compress_always_ends_with_a_literal():
    assert lz_compress("abab") == [(0, 0, "a"), (0, 0, "b"), (2, 1, "b")]
    assert lz_compress("") == []


def test_lz_compress_prefers_the_nearest_of_equally_long_matches():
    assert lz_compress("abxabyab!")[-1] == (3, 2, "!")


def test_lz_compress_respects_the_window():
    assert lz_compress("abcdabcd!", window=3) == [(0, 0, c) for c in "abcdabcd!"]
    assert lz_compress("abcdabcd!", window=4)[4] == (4, 4, "!")


def test_lz_compress_respects_the_maximum_length():
    triples = lz_compress("a" * 20, max_length=5)
    assert triples[:2] == [(0, 0, "a"), (1, 5, "a")]
    assert all(length <= 5 for _, length, _ in triples)


def test_lz_decompress_expands_triples():
    assert lz_decompress([(0, 0, "a"), (0, 0, "b"), (2, 2, "c")]) == "ababc"
    assert lz_decompress([(0, 0, "x"), (1, 3, "y")]) == "xxxxy"
    assert lz_decompress([]) == ""


def test_lz_decompress_refuses_offsets_outside_the_output():
    with pytest.raises(ValueError, match="outside"):
        lz_decompress([(0, 0, "a"), (2, 1, "b")])
    with pytest.raises(ValueError):
        lz_decompress([(0, 2, "a")])
    assert lz_decompress([(0, 0, "a"), (1, 1, "b")]) == "aab"


def test_lz_round_trips():
    samples = ["", "a", "abracadabra", "to be or not to be, that is the question", "xyz" * 30, "mississippi"]
    for text in samples:
        for window in (1, 4, 32):
            assert lz_decompress(lz_compress(text, window=window)) == text


def test_lz_compresses_repetitive_text():
    assert len(lz_compress("abc" * 40)) < 15
