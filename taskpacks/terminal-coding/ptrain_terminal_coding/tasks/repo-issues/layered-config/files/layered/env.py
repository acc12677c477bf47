"""Configuration from environment variables."""


def coerce(value):
    for kind in (int, float, bool):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def from_environ(environ, prefix="APP_"):
    config = {}
    for name, value in environ.items():
        if name.startswith(prefix):
            config[name[len(prefix) :].lower()] = coerce(value)
    return config
