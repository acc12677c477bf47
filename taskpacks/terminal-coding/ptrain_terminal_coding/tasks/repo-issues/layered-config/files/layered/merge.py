"""Merging configuration layers."""


def deep_merge(base, override):
    merged = dict(base)
    merged.update(override)
    return merged
