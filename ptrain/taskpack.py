"""Taskpacks: ptrain's one plug-in axis, found through the entry-point group `ptrain.taskpacks`.

A taskpack is a pip-installable package whose entry point names an object with at least a
`name`, a `version` and an `image` (an `ImageSpec`: a Containerfile built on ptrain's base image).
Tasks, tools and the verifier join this contract in later work (see DESIGN.md). Loading checks the
object, so a broken plug-in is an error naming its package, never a crash mid-run.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from typing import Protocol, runtime_checkable

from ptrain.errors import ConfigError
from ptrain.sandbox.images import ImageSpec

GROUP = "ptrain.taskpacks"


@runtime_checkable
class Taskpack(Protocol):
    name: str
    version: str
    image: ImageSpec


def installed() -> dict[str, EntryPoint]:
    """Entry points of every installed taskpack, by name."""
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def validate(obj: object, where: str) -> Taskpack:
    problems = [f"no `{attr}`" for attr in ("name", "version", "image") if not hasattr(obj, attr)]
    if not problems and not isinstance(obj.image, ImageSpec):
        problems.append(f"`image` is a {type(obj.image).__name__}, expected ptrain.sandbox.images.ImageSpec")
    if problems:
        raise ConfigError(f"taskpack {where} is broken: {'; '.join(problems)}", fix=f"fix or uninstall {where}")
    return obj


def load(name: str) -> Taskpack:
    eps = installed()
    if name not in eps:
        known = ", ".join(sorted(eps)) or "none"
        raise ConfigError(f"no taskpack named {name!r} is installed (installed: {known})")
    ep = eps[name]
    where = f"{name!r} ({ep.dist.name if ep.dist else ep.value})"
    try:
        obj = ep.load()
    except Exception as e:
        raise ConfigError(f"taskpack {where} failed to import: {type(e).__name__}: {e}") from e
    return validate(obj() if isinstance(obj, type) else obj, where)
