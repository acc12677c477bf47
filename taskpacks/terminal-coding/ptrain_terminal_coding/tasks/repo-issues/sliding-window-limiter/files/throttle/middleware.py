"""guard(): answer 429 for limited callers."""


def guard(limiter, key_func):
    def wrap(handler):
        def wrapped(request):
            key = key_func(request)
            if not limiter.allow(key):
                return 429, {"retry_at": limiter.reset_at(key)}
            return handler(request)

        return wrapped

    return wrap
