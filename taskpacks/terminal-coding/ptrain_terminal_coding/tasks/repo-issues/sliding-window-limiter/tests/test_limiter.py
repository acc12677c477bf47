import random


class Clock:
    now = 0.0

    def __call__(self):
        return self.now


def make(limit=3, window_s=10):
    from throttle import SlidingWindowLimiter

    clock = Clock()
    return SlidingWindowLimiter(limit, window_s, clock=clock), clock


def test_a_retrying_client_gets_through_after_the_window():
    limiter, clock = make()
    assert [limiter.allow("c") for _ in range(3)] == [True] * 3
    for t in range(1, 10):
        clock.now = t
        assert not limiter.allow("c")
    clock.now = 10
    assert limiter.allow("c")


def test_the_window_is_half_open():
    limiter, clock = make(limit=2, window_s=5)
    assert limiter.allow("k") and limiter.allow("k")
    clock.now = 4.999
    assert not limiter.allow("k")
    clock.now = 5.0
    assert limiter.allow("k") and limiter.allow("k") and not limiter.allow("k")


def test_remaining_and_reset_at():
    limiter, clock = make(limit=3, window_s=10)
    assert limiter.remaining("a") == 3 and limiter.reset_at("a") is None
    limiter.allow("a")
    clock.now = 2
    limiter.allow("a")
    limiter.allow("a")
    assert not limiter.allow("a") and not limiter.allow("a")
    assert limiter.remaining("a") == 0 and limiter.reset_at("a") == 10
    clock.now = 10
    assert limiter.remaining("a") == 1 and limiter.reset_at("a") == 12


def test_keys_are_independent():
    limiter, clock = make(limit=1)
    assert limiter.allow("a") and limiter.allow("b") and not limiter.allow("a") and limiter.remaining("c") == 1


def test_against_a_model():
    r = random.Random(5)
    limiter, clock = make(limit=4, window_s=3)
    model = {}
    for _ in range(3000):
        clock.now += r.choice([0, 0, 0.25, 0.5, 1, 3])
        key = r.choice("xyz")
        counted = [t for t in model.get(key, []) if clock.now < t + 3]
        want = len(counted) < 4
        if want:
            counted.append(clock.now)
        model[key] = counted
        assert limiter.allow(key) == want
        assert limiter.remaining(key) == 4 - len(counted)


def test_the_middleware_answers_429():
    from throttle.middleware import guard

    limiter, clock = make(limit=1, window_s=10)
    handler = guard(limiter, lambda req: req["ip"])(lambda req: (200, "ok"))
    assert handler({"ip": "1.2.3.4"}) == (200, "ok")
    assert handler({"ip": "1.2.3.4"}) == (429, {"retry_at": 10})
