"""The online run's memory figures: glibc's free heap pages go back to the system each round."""

from __future__ import annotations

import pytest

from ptrain.online import memory


@pytest.mark.skipif(memory._libc() is None, reason="malloc_trim is glibc's")
def test_release_hands_freed_heap_pages_back():
    chunks = [bytes(64 * 1024) for _ in range(4000)]  # 262 MB under glibc's mmap threshold: in the heap
    sentinel = bytes(64 * 1024)  # allocated last, so the freed chunks are not the heap's top (no automatic trim)
    del chunks
    figures = memory.release()
    assert figures["released_gb"] > 0.1, figures
    assert 0 < figures["rss_gb"] <= figures["peak_rss_gb"]
    assert len(sentinel) == 64 * 1024


def test_rss_is_this_process():
    assert 0.01 < memory.rss_gb() < 100
