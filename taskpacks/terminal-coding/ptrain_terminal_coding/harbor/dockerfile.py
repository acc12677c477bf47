"""A task's Dockerfile converted to a Containerfile on terminal-coding's own image.

Registries can't be reached here, so FROM is replaced by terminal-coding's Containerfile (podman
reuses its layers, so the build takes seconds) plus the Debian packages that stand in for the base
image (a Go, JDK, GCC or Node image: bases.py), whose ENV comes first in the task's; the other steps
are kept, run as root, and the WORKDIR is handed to the sandbox user (1000). Python packages
(the Dockerfile's `pip install` lines, its setup scripts', and what the tests ask for) come from
wheels the host fetched into the context (wheels.py): pip is installed from its own wheel, and
PIP_NO_INDEX / PIP_FIND_LINKS (build ARGs, so not in the image's environment) make the task's own
`pip install` lines install offline, unchanged. A download that a registry holds unchanged (the
Kotlin compiler from JetBrains' releases: substitutes.py) becomes a COPY of the registry's package;
heredoc RUNs and exact apt pins, which podman's builder and Debian's mirror can't take, are rewritten
(runlines.py). Steps that download anything else (`git clone`, `curl`/`wget` of a URL, `ADD URL`) or
need a second stage are refused with the reason, before any build is tried.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

from ptrain.errors import ConfigError
from ptrain_terminal_coding.harbor import runlines, substitutes, wheels
from ptrain_terminal_coding.harbor.bases import map_base
from ptrain_terminal_coding.harbor.imported import META, ImportResult
from ptrain_terminal_coding.harbor.offline import Needs, needs_of, scripts_run
from ptrain_terminal_coding.harbor.shell import logical_lines, shorten

PROLOGUE = Path(__file__).parents[1] / "image" / "Containerfile"
DEFAULT_WORKDIR = "/app"
DROPPED = {"CMD", "ENTRYPOINT", "EXPOSE", "HEALTHCHECK", "VOLUME", "STOPSIGNAL", "ONBUILD", "MAINTAINER"}
PYTHON_FROM = re.compile(r"(?:^|/)python:(\d+\.\d+)")
OFFLINE_ARGS = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": wheels.IMAGE_DIR, "PIP_BREAK_SYSTEM_PACKAGES": "1",
                "PIP_DISABLE_PIP_VERSION_CHECK": "1", "UV_OFFLINE": "1", "UV_NO_INDEX": "1",
                "UV_FIND_LINKS": wheels.IMAGE_DIR, "UV_SYSTEM_PYTHON": "1", "UV_BREAK_SYSTEM_PACKAGES": "1"}  # fmt: skip


def convert_dockerfile(text: str, context: Path, result: ImportResult, tests: Needs | None = None) -> str:
    """The task's Dockerfile on terminal-coding's image: FROM mapped, other steps kept, Python packages
    (its own and `tests`', what its test and solution scripts ask for) from wheels, workdir owned by 1000."""
    steps, workdir, froms, env, args, build = [], "/", [], {}, {}, Needs()
    shell, entries, i, heredocs = ["/bin/sh"], logical_lines(text), 0, 0
    while i < len(entries):
        group, line = entries[i]
        i += 1
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
        elif word == "RUN" and (marker := runlines.heredoc(rest)):
            body = []
            while i < len(entries) and not entries[i][1] and (not body or body[-1].strip() != marker.group(3)):
                body += entries[i][0]
                i += 1
            shelled = not rest[: marker.start()].strip() or re.match(r"^(?:\S*/)?(?:ba)?sh\b", rest.strip())
            build.add(needs_of("\n".join([rest, *body]) if shelled else rest, context))
            heredocs += 1
            lines, note = runlines.heredoc_steps(rest, body, context, shell, heredocs)
            steps += lines
            result.notes.append(note)
        elif word == "RUN" and (found := substitutes.find(rest, {**args, **env})):
            name = substitutes.place(found, context)
            steps += substitutes.steps(found, name, rest)
            result.notes.append(substitutes.note(found, name))
            run_needs(found.rest, line, context, build)
        else:
            if word == "WORKDIR":
                workdir = os.path.normpath(os.path.join(workdir, rest.strip().strip("\"'")))
            elif word == "ENV":
                env.update({k: expand_known(v, {**args, **env}) for k, v in env_of(rest).items()})
            elif word == "ARG":
                args.update({k: expand_known(v, {**args, **env}) for k, v in env_of(rest).items() if "=" in rest})
            elif word == "SHELL":
                shell = runlines.shell_of(rest)
            elif word in ("COPY", "ADD"):
                build.downloads += check_copy(word, rest, context)
            elif word == "RUN":
                run_needs(rest, line, context, build)
                if pins := runlines.apt_pins(rest):
                    result.warnings.append(runlines.pin_warning(pins))
                    steps += [f"# ptrain: was `{shorten(line, 300)}`", *runlines.unpin(group, pins)]
                    continue
            steps += group
    if len(froms) != 1:
        raise ConfigError(f"the Dockerfile has {len(froms)} FROM lines; one stage is supported")
    base = map_base(froms[0], text)
    if build.downloads:
        raise ConfigError(
            "the image build downloads what can't be had here (image builds reach only the package registries): "
            + "; ".join(build.downloads[:5]),
            fix="put what it downloads in the build context and COPY it, or install it with apt-get or pip",
        )
    if re.search(r"(^|/)ubuntu:", froms[0]):
        result.warnings.append(f"FROM {froms[0]} mapped onto Debian bookworm: its apt packages are Debian's "
                               "(older GCC and Python than a recent Ubuntu's; bases.UBUNTU's toolchains keep their versions)")  # fmt: skip
    asked = PYTHON_FROM.search(froms[0])
    if asked and asked.group(1) != wheels.PYTHON_VERSION:
        result.warnings.append(f"FROM {froms[0]} asks for Python {asked.group(1)}: it runs under the image's "
                               f"python3 ({wheels.PYTHON_VERSION}, Debian's)")  # fmt: skip
    result.warnings += base.warnings
    tests = tests or Needs()
    provide = offline_pip(build.requirements + tests.requirements, context, result)
    if tests.requirements:
        result.notes.append(f"test-time packages installed in the image: {' '.join(tests.requirements)}")
    result.base = froms[0]
    result.workdir = workdir if workdir != "/" else DEFAULT_WORKDIR
    result.env = {**base.env, **{k: expand_known(v, base.env) for k, v in env.items()}}
    w = shlex.quote(result.workdir)
    return "\n".join([
        f"# Converted by ptrain from {result.layout} task {result.name!r}: see ../{META}",
        PROLOGUE.read_text().rstrip(),
        f"# ---- {result.name}: its Dockerfile, FROM {froms[0]} mapped onto the image above ----",
        "USER root",
        "WORKDIR /",
        "RUN [ -e /usr/bin/python ] || ln -s python3 /usr/bin/python",
        *base.steps(),
        *provide,
        *steps,
        *test_packages(tests.requirements),
        "# ---- ptrain: the sandbox user owns the workdir (a writable tmpfs at run time) ----",
        "USER root",
        f"RUN mkdir -p {w} && chown -R 1000:1000 {w}",
        f"WORKDIR {result.workdir}",
        "USER 1000:1000",
        "",
    ])  # fmt: skip


def run_needs(run: str, line: str, context: Path, build: Needs) -> None:
    """What a RUN line, and the scripts of the context it runs, fetch, added to `build`."""
    build.add(needs_of(run, context))
    for script in scripts_run(run, context):
        found = needs_of(script.read_text(errors="replace"), context)
        where = f"{script.relative_to(context)} (run by `{shorten(line, 40)}`)"
        build.add(Needs(found.requirements, [f"{where}: {d}" for d in found.downloads]))


def env_of(rest: str) -> dict[str, str]:
    """`ENV K=V K2="V 2"` or the old `ENV K V`."""
    words = shlex.split(rest)
    if words and "=" not in words[0]:
        return {words[0]: rest.strip()[len(words[0]) :].strip()}
    return dict(w.split("=", 1) for w in words if "=" in w)


def expand_known(value: str, env: dict[str, str]) -> str:
    """`$VAR` / `${VAR}` replaced where VAR was set before (by the base image or an earlier ENV), as
    Docker expands ENV at build time; others (PATH from the image) are left for the sandbox to expand."""
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: env.get(m.group(1) or m.group(2), m.group(0)), value)


def offline_pip(requirements: list[str], context: Path, result: ImportResult) -> list[str]:
    """Fetch the wheels (pinned, cached) into the context; the steps that install pip from its own
    wheel and point every later `pip install` at them."""
    if not requirements:
        return []
    pins = wheels.place(wheels.fetch(requirements), context)
    result.requirements, result.pins = list(requirements), pins
    result.notes.append(f"Python packages from wheels fetched on the host: {' '.join(pins)}")
    pip = f"{wheels.IMAGE_DIR}/{wheels.pip_wheel(context)}"
    return [
        f"# ---- ptrain: Python packages offline, from {wheels.CONTEXT_DIR}/ (pins.txt) ----",
        f"COPY {wheels.CONTEXT_DIR}/ {wheels.IMAGE_DIR}/",
        f"RUN python3 {pip}/pip install --no-index --no-cache-dir --break-system-packages --quiet {pip}",
        *(f"ARG {k}={v}" for k, v in OFFLINE_ARGS.items()),
        *uv_where_its_installer_puts_it(requirements),
    ]


def uv_where_its_installer_puts_it(requirements: list[str]) -> list[str]:
    """uv from its wheel, and a copy in /root/.local/bin, where `curl .../uv/install.sh | sh` puts it for
    root (Dockerfiles `cp` it from there, so a link would be copied onto itself); the installer line
    itself then fails harmlessly offline."""
    uv = [r for r in requirements if re.fullmatch(r"uv(==[\w.]+)?", r)]
    if not uv:
        return []
    return [f"RUN python3 -m pip install --no-index --find-links {wheels.IMAGE_DIR} --no-cache-dir --quiet {uv[0]} \\\n"
            " && mkdir -p /root/.local/bin && cp \"$(command -v uv)\" \"$(command -v uvx)\" /root/.local/bin/"]  # fmt: skip


def test_packages(requirements: list[str]) -> list[str]:
    if not requirements:
        return []
    specs = " ".join(shlex.quote(r) for r in requirements)
    return [
        "# ---- ptrain: what the test and solution scripts install at run time, installed now ----",
        "USER root",
        f"RUN python3 -m pip install --no-index --find-links {wheels.IMAGE_DIR} --no-cache-dir --quiet {specs}",
    ]


def check_copy(word: str, rest: str, context: Path) -> list[str]:
    """Downloads an ADD makes (a URL); ConfigError for a source missing from the context."""
    if word == "ADD" and re.search(r"(?:^|\s)(https?|git)://|\bgit@", rest):
        return [f"`ADD {shorten(rest, 50)}` downloads"]
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
    return []
