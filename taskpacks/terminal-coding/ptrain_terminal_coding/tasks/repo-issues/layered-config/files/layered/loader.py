"""load(): defaults < TOML file < environment."""

import tomllib
from pathlib import Path

from layered.env import from_environ
from layered.merge import deep_merge


def load(defaults, path=None, environ=None, prefix="APP_"):
    config = defaults
    if path is not None and Path(path).exists():
        with open(path, "rb") as f:
            config = deep_merge(config, tomllib.load(f))
    if environ:
        config = deep_merge(config, from_environ(environ, prefix))
    return config
