import pytest

from lru import LRUCache


def test_get_and_put():
    cache = LRUCache(2)
    cache.put("a", 1)
    assert cache.get("a") == 1
    assert cache.get("b", "none") == "none"


def test_evicts_least_recently_used():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("c", 3)
    assert "a" not in cache
    assert cache.keys() == ["b", "c"]


def test_get_counts_as_use():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.get("a")
    cache.put("c", 3)
    assert cache.keys() == ["a", "c"]


def test_updating_a_key_does_not_evict():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 10)
    assert len(cache) == 2
    assert cache.get("a") == 10 and cache.get("b") == 2


def test_put_of_existing_key_counts_as_use():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 3)
    cache.put("c", 4)
    assert cache.keys() == ["a", "c"]


def test_contains_does_not_count_as_use():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert "a" in cache
    cache.put("c", 3)
    assert cache.keys() == ["b", "c"]


def test_hits_and_misses():
    cache = LRUCache(1)
    cache.put("x", 1)
    cache.get("x")
    cache.get("y")
    cache.get("x")
    assert (cache.hits, cache.misses) == (2, 1)


def test_capacity_one_and_falsy_values():
    cache = LRUCache(1)
    cache.put("a", 0)
    assert cache.get("a", "missing") == 0
    cache.put("b", None)
    assert cache.keys() == ["b"]
    assert cache.get("b", "missing") is None


def test_never_grows_past_capacity():
    cache = LRUCache(3)
    for i in range(100):
        cache.put(i % 7, i)
        cache.get((i * 3) % 7)
        assert len(cache) <= 3


def test_zero_capacity_is_rejected():
    with pytest.raises(ValueError):
        LRUCache(0)
