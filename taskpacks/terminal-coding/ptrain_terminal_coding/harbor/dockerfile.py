"""A task's Dockerfile converted to a Containerfile on terminal-coding's own image.

Registries can't be reached here, so FROM (Debian, Ubuntu or python images) is replaced by
terminal-coding's Containerfile (podman reuses its layers, so the build takes seconds); the other
steps are kept, run as root, and the WORKDIR is handed to the sandbox user (1000). Steps that need
PyPI or a second stage are refused with the reason, before any build is tried.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

from ptrain.errors import ConfigError
from ptrain_terminal_coding.harbor.imported import META, ImportResult
from ptrain_terminal_coding.harbor.shell import logical_lines, shorten

PROLOGUE = Path(__file__).parents[1] / "image" / "Containerfile"
DEFAULT_WORKDIR = "/app"
MAPPABLE = re.compile(r"(^|/)(python|debian|ubuntu|buildpack-deps)([:@-]|$)")
DROPPED = {"CMD", "ENTRYPOINT", "EXPOSE", "HEALTHCHECK", "VOLUME", "STOPSIGNAL", "ONBUILD", "MAINTAINER"}
PIP_BUILD = re.compile(r"\b(pip3?|uv|uvx)\s+(install|add|sync|pip)\b")


def convert_dockerfile(text: str, context: Path, result: ImportResult) -> str:
    """The task's Dockerfile on terminal-coding's image: FROM mapped, other steps kept, workdir owned by 1000."""
    steps, workdir, froms, env = [], "/", [], {}
    for group, line in logical_lines(text):
        word, _, rest = line.strip().partition(" ")
        word = word.upper()
        if not line.strip() or line.lstrip().startswith("#"):
            steps += group
        elif word == "FROM":
            froms.append(next((w for w in rest.split() if not w.startswith("--")), ""))
        elif not froms:
            result.notes.append(f"Dockerfile: dropped `{shorten(line, 40)}` (before FROM)")
        elif word in DROPPED:
            result.notes.append(f"Dockerfile: dropped `{shorten(line, 40)}` (not used in a sandbox)")
        else:
            if word == "WORKDIR":
                workdir = os.path.normpath(os.path.join(workdir, rest.strip().strip("\"'")))
            elif word == "ENV":
                env.update(env_of(rest))
            elif word in ("COPY", "ADD"):
                check_copy(rest, context)
            elif word == "RUN" and PIP_BUILD.search(rest) and "--no-index" not in rest:
                raise ConfigError(
                    f"`{shorten(line)}` needs PyPI, which image builds here cannot reach",
                    fix="install Debian python3-* packages with apt-get, or wheels with pip --no-index",
                )
            if word == "RUN" and re.search(r"\b(curl|wget)\b", rest):
                result.warnings.append(f"Dockerfile: `{shorten(line)}` downloads at build time; it may fail here")
            steps += group
    if len(froms) != 1:
        raise ConfigError(f"the Dockerfile has {len(froms)} FROM lines; one stage is supported")
    if not MAPPABLE.search(froms[0]):
        raise ConfigError(f"base image {froms[0]!r} can't be mapped: only Debian, Ubuntu and python images can")
    result.base = froms[0]
    result.workdir = workdir if workdir != "/" else DEFAULT_WORKDIR
    result.env = env
    w = shlex.quote(result.workdir)
    return "\n".join([
        f"# Converted by ptrain from {result.layout} task {result.name!r}: see ../{META}",
        PROLOGUE.read_text().rstrip(),
        f"# ---- {result.name}: its Dockerfile, FROM {froms[0]} mapped onto the image above ----",
        "USER root",
        "WORKDIR /",
        "RUN [ -e /usr/bin/python ] || ln -s python3 /usr/bin/python",
        *steps,
        "# ---- ptrain: the sandbox user owns the workdir (a writable tmpfs at run time) ----",
        "USER root",
        f"RUN mkdir -p {w} && chown -R 1000:1000 {w}",
        f"WORKDIR {result.workdir}",
        "USER 1000:1000",
        "",
    ])  # fmt: skip


def env_of(rest: str) -> dict[str, str]:
    """`ENV K=V K2="V 2"` or the old `ENV K V`."""
    words = shlex.split(rest)
    if words and "=" not in words[0]:
        return {words[0]: rest.strip()[len(words[0]) :].strip()}
    return dict(w.split("=", 1) for w in words if "=" in w)


def check_copy(rest: str, context: Path) -> None:
    args = [a for a in shlex.split(rest) if not a.startswith("--")]
    if any(a.startswith("--from") for a in shlex.split(rest)):
        raise ConfigError("COPY --from needs another stage; one stage is supported")
    if args and args[0].startswith("["):
        args = json.loads(rest[rest.index("[") :])
    for source in args[:-1]:
        pattern = source.strip("/").removeprefix("./")
        if pattern in ("", ".") or "$" in pattern or re.match(r"https?://", source):
            continue
        if not list(context.glob(pattern)):
            raise ConfigError(
                f"COPY/ADD source {source!r} is not in the build context",
                fix="tests and solutions are kept out of the image; they enter only at verification",
            )
