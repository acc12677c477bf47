"""A tiny taskpack for tests: an image built on ptrain's base with one file added.

It is not registered as an entry point (users should not see it); tests register it through a
temporary distribution on sys.path, the way pip would.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ptrain.sandbox.images import ImageSpec


@dataclass(frozen=True)
class TinyTaskpack:
    name: str = "tiny"
    version: str = "0.1.0"
    image: ImageSpec = field(default_factory=lambda: ImageSpec("tiny", Path(__file__).parent / "image"))


TASKPACK = TinyTaskpack()
