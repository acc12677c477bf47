from pathlib import Path


def test_words_txt_has_the_word_count():
    assert Path("/workspace/words.txt").read_text().strip() == "60"
