class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def make(capacity=3, ttl_s=10, stats=None):
    from cachet import TTLCache

    clock = Clock()
    return TTLCache(capacity=capacity, ttl_s=ttl_s, clock=clock, stats=stats), clock


def test_expired_entries_do_not_count_and_are_dropped_first():
    cache, clock = make()
    cache.set("a", 1)
    cache.set("b", 2)
    clock.now += 6
    cache.set("c", 3)
    clock.now += 5  # a and b expired (11 s old), c is 5 s old
    assert len(cache) == 1 and "a" not in cache and "b" not in cache and cache.keys() == ["c"]
    cache.set("d", 4)
    cache.set("e", 5)
    assert sorted(cache.keys()) == ["c", "d", "e"]
    assert cache.get("c") == 3


def test_an_entry_is_gone_exactly_at_ttl():
    cache, clock = make()
    cache.set("a", 1)
    clock.now += 9.999
    assert cache.get("a") == 1
    clock.now += 0.001
    assert cache.get("a", "gone") == "gone" and "a" not in cache and len(cache) == 0


def test_get_marks_a_key_as_recently_used():
    cache, clock = make()
    for k in "abc":
        cache.set(k, k)
        clock.now += 1
    assert cache.get("a") == "a"
    cache.set("d", "d")
    assert sorted(cache.keys()) == ["a", "c", "d"]
    cache.get("c")
    cache.set("e", "e")
    assert sorted(cache.keys()) == ["c", "d", "e"]


def test_set_refreshes_expiry_and_recency():
    cache, clock = make()
    cache.set("a", 1)
    cache.set("b", 2)
    cache.set("c", 3)
    clock.now += 8
    cache.set("a", 10)
    cache.set("d", 4)
    assert sorted(cache.keys()) == ["a", "c", "d"]
    clock.now += 5
    assert cache.get("a") == 10 and "c" not in cache and sorted(cache.keys()) == ["a", "d"]


def test_missing_keys_return_the_default_and_stats_count():
    from cachet import Stats

    stats = Stats()
    cache, clock = make(capacity=2, stats=stats)
    assert cache.get("x") is None and cache.get("x", 5) == 5
    cache.set("x", 0)
    assert cache.get("x") == 0
    clock.now += 10
    assert cache.get("x") is None
    assert (stats.hits, stats.misses) == (1, 3)


def test_many_operations_against_a_model():
    import random

    r = random.Random(7)
    cache, clock = make(capacity=4, ttl_s=5)
    model = {}  # key -> [value, expires, last_use]
    for tick in range(1, 2001):
        clock.now += r.choice([0, 0.5, 1, 2])
        for k in [k for k, v in model.items() if v[1] <= clock.now]:
            del model[k]
        key = r.choice("abcdefg")
        if r.random() < 0.5:
            if key not in model and len(model) >= 4:
                del model[min(model, key=lambda k: model[k][2])]
            model[key] = [tick, clock.now + 5, tick]
            cache.set(key, tick)
        else:
            want = model[key][0] if key in model else None
            if key in model:
                model[key][2] = tick
            assert cache.get(key) == want
        assert sorted(cache.keys()) == sorted(model) and len(cache) == len(model)
