cd /workspace && cat > layered/merge.py <<'PY'
"""Merging configuration layers."""

import copy


def deep_merge(base, override):
    """A new dict: tables merged recursively, anything else in `override` replaces."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged
PY
cat > layered/env.py <<'PY'
"""Configuration from environment variables."""


def coerce(value):
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def from_environ(environ, prefix="APP_"):
    config = {}
    for name, value in environ.items():
        if not name.startswith(prefix):
            continue
        *parents, leaf = name[len(prefix):].lower().split("__")
        node = config
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = coerce(value)
    return config
PY
