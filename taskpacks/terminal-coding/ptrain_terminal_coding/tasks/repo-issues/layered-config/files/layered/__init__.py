"""layered: defaults, a TOML file and the environment, merged."""

from layered.loader import load

__all__ = ["load"]
