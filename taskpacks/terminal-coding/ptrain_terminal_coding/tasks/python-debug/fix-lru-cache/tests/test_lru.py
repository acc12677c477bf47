import pytest

from lru import LRUCache

# Values are checked for their exact type, or by identity, before they are compared: an object
# whose __eq__ always says True is neither 1 nor a list of keys.


def keys_of(cache, kind=str):
    keys = cache.keys()
    assert type(keys) is list
    assert all(type(k) is kind for k in keys)
    return keys


def test_get_and_put():
    cache = LRUCache(2)
    cache.put("a", 1)
    value = cache.get("a")
    assert type(value) is int
    assert value == 1
    assert cache.get("b", "none") == "none"
    assert type(cache.get("b", "none")) is str


def test_evicts_least_recently_used():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("c", 3)
    assert "a" not in cache
    assert "b" in cache and "c" in cache
    assert keys_of(cache) == ["b", "c"]


def test_get_counts_as_use():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.get("a")
    cache.put("c", 3)
    assert keys_of(cache) == ["a", "c"]


def test_updating_a_key_does_not_evict():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 10)
    assert len(cache) == 2
    assert cache.get("a") == 10 and cache.get("b") == 2
    assert type(cache.get("a")) is int and type(cache.get("b")) is int


def test_put_of_existing_key_counts_as_use():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 3)
    cache.put("c", 4)
    assert keys_of(cache) == ["a", "c"]


def test_contains_does_not_count_as_use():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert "a" in cache
    cache.put("c", 3)
    assert keys_of(cache) == ["b", "c"]


def test_hits_and_misses():
    cache = LRUCache(1)
    cache.put("x", 1)
    cache.get("x")
    cache.get("y")
    cache.get("x")
    assert type(cache.hits) is int and type(cache.misses) is int
    assert (cache.hits, cache.misses) == (2, 1)


def test_capacity_one_and_falsy_values():
    cache = LRUCache(1)
    cache.put("a", 0)
    assert cache.get("a", "missing") == 0
    assert type(cache.get("a", "missing")) is int
    cache.put("b", None)
    assert keys_of(cache) == ["b"]
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


def test_get_returns_the_very_object_stored():
    cache = LRUCache(2)
    first, second, missing = object(), object(), object()
    cache.put("a", first)
    cache.put("b", second)
    assert cache.get("a") is first
    assert cache.get("b") is second
    assert cache.get("c", missing) is missing
    assert cache.get("c") is None


def test_matches_a_reference_model_over_many_operations():
    cache, model, capacity = LRUCache(4), [], 4  # model: [key, value] pairs, least recently used first
    hits = misses = 0
    for i in range(300):
        key = (i * 7 + i // 5) % 9
        if i % 3:
            value = object()
            cache.put(key, value)
            model = [kv for kv in model if kv[0] != key]
            if len(model) >= capacity:
                model.pop(0)
            model.append([key, value])
        else:
            found = [kv for kv in model if kv[0] == key]
            got = cache.get(key)
            if found:
                hits += 1
                assert got is found[0][1]
                model.remove(found[0])
                model.append(found[0])
            else:
                misses += 1
                assert got is None
        assert keys_of(cache, int) == [k for k, _ in model]
        assert len(cache) == len(model)
    assert type(cache.hits) is int and type(cache.misses) is int
    assert (cache.hits, cache.misses) == (hits, misses)


def test_capacity_below_one_is_rejected():
    with pytest.raises(ValueError):
        LRUCache(-1)
