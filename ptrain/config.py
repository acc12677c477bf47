"""A stage's config dataclass from defaults, a TOML file and flags, each value checked.

    # rollout.toml                      ptrain rollout runs/a --config rollout.toml --samples 8
    samples = 4

Flags override the file. A key the file misspells is an error that lists the known keys, a value of
the wrong type is an error naming the key and the file, and the file is checked whole, the values a
flag overrides too. The rollout and train configs (ptrain/rollout/config.py, ptrain/train/config.py)
load through `load_into`.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import fields
from pathlib import Path
from typing import Any, get_type_hints

from ptrain.errors import ConfigError


def load_into(cls: type, what: str, path: Path | None = None, **overrides: Any) -> Any:
    """A stage's config dataclass from defaults, then the TOML file, then the overrides that are not None.

    The file is checked whole before any flag overrides it: an unknown key, a value of the wrong type,
    or a value the stage would refuse is an error even when a flag replaces that value."""
    values: dict[str, Any] = {}
    if path is not None:
        try:
            values = tomllib.loads(Path(path).read_text())
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise ConfigError(f"cannot read {what} config {path}: {e}") from e
        values = _checked(cls, what, values, f" in {path}")
    flags = _checked(cls, what, {k: v for k, v in overrides.items() if v is not None})
    config = dataclasses.replace(cls(), **{**values, **flags})
    for key in sorted(set(values) & set(flags)):  # the file's value, had the flag not replaced it
        if values[key] != flags[key]:
            try:
                dataclasses.replace(config, **{key: values[key]})
            except ConfigError as e:
                raise ConfigError(f"{e.args[0]} (in {path}, where a flag overrides {key})", fix=e.fix) from e
    return config


def _checked(cls: type, what: str, values: dict[str, Any], where: str = "") -> dict[str, Any]:
    """The values with every key a field of `cls` and every value of its field's type."""
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(
            f"unknown {what} config keys: {', '.join(unknown)}{where}", fix=f"known keys: {', '.join(sorted(known))}"
        )
    hints = get_type_hints(cls)
    return {key: _coerce(what, key, value, hints[key], where) for key, value in values.items()}


def _coerce(what: str, key: str, value: Any, hint: Any, where: str = "") -> Any:
    """TOML values to the field's type, refusing what does not fit (a string for an int, say)."""
    text = str(hint)
    if "tuple" in text:
        if isinstance(value, str):
            value = [v for v in value.split(",") if v]
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{what} config {key} must be a list of strings, got {value!r}{where}")
        return tuple(value)
    expected = bool if hint is bool else float if hint is float else int if "int" in text else str
    if value is None and "None" in text:
        return None
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        raise ConfigError(f"{what} config {key} must be {expected.__name__}, got {value!r}{where}")
    return value
