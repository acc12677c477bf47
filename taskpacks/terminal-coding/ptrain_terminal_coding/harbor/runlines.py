"""RUN lines that podman's builder or Debian's mirror can't take as written, rewritten to do the same.

- **Heredocs** (`RUN <<EOF`, `RUN python3 - <<'PY'`, `RUN cat > f <<EOF`): BuildKit syntax that podman
  4.3's buildah reads as instructions ("Unknown instruction IMPORT"). The RUN's whole shell text, heredoc
  included, is written into the build context (`ptrain-heredocs/N.sh`), copied into the image and run by
  the shell RUN would use, so the shell itself reads the heredoc: a quoted delimiter stays literal, an
  unquoted one expands at run time, `<<-` strips tabs, as under BuildKit. `RUN <<EOF` alone runs its body
  as the script (executed directly when it starts with `#!`).
- **Exact apt pins** (`apt-get install git=1:2.39.5-0+deb12u2`): Debian's mirror keeps only each
  package's version in the current point release, so an older pin can't be installed; the pin is dropped
  (`git`), with a warning naming it.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from ptrain_terminal_coding.harbor.offline import PREFIX, words_of
from ptrain_terminal_coding.harbor.shell import KEYWORD, shorten, split_commands

HEREDOC = re.compile(r"(?<!<)<<(-?)(?!<)\s*(['\"]?)([A-Za-z_]\w*)\2")
CONTEXT_DIR = "ptrain-heredocs"  # in the build context
IMAGE_DIR = "/opt/ptrain/heredocs"  # in the image
APT_INSTALL = re.compile(r"^(?:\S*/)?apt(?:-get)?\s+(?:-\S+\s+)*install\b(.*)$")
APT_PIN = re.compile(r"^([a-z0-9][a-z0-9+.-]*(?::[a-z0-9-]+)?)=(\d[\w.+:~-]*)$")


def heredoc(run: str) -> re.Match[str] | None:
    return HEREDOC.search(run)


def heredoc_script(command: str, body: list[str], match: re.Match[str]) -> tuple[str, bool]:
    """The file a heredoc RUN becomes and whether it is run directly (a `#!` script), given the RUN's
    text without `RUN` (`command`), its body lines and terminator (`body`), and its heredoc marker."""
    before, after = command[: match.start()].strip(), command[match.end() :].strip()
    if before or after:  # `cmd <<EOF ... EOF`: the shell reads the heredoc, quoted or not, as BuildKit's does
        return "\n".join([command, *body]) + "\n", False
    lines = body[:-1] if body and body[-1].strip() == match.group(3) else body
    if match.group(1):
        lines = [line.lstrip("\t") for line in lines]
    text = "\n".join(lines) + "\n"  # `RUN <<EOF` alone: the body is the script
    return text, text.startswith("#!")


def heredoc_steps(line: str, body: list[str], context: Path, shell: list[str], n: int) -> tuple[list[str], str]:
    """The Containerfile lines for a heredoc RUN (`line`, without `RUN`): the original as a comment, a COPY
    of the script written into the build context, and its RUN; and a note."""
    text, direct = heredoc_script(line, body, heredoc(line))
    name = f"{n}.sh"
    path = context / CONTEXT_DIR / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    image = f"{IMAGE_DIR}/{name}"
    run = image if direct else " ".join([*map(shlex.quote, shell), image])
    note = f"Dockerfile: `RUN {shorten(line, 40)}` and its heredoc run from {CONTEXT_DIR}/{name} (podman's builder has no heredocs)"
    return [
        f"# ptrain: was `RUN {shorten(line, 300)}` (heredoc)",
        f"COPY {CONTEXT_DIR}/{name} {image}",
        f"RUN {run}",
    ], note


def shell_of(rest: str) -> list[str]:
    """The shell a `SHELL ["/bin/bash", "-o", "pipefail", "-c"]` sets, without its `-c`."""
    words = json.loads(rest)
    return words[:-1] if words and words[-1] == "-c" else words


def apt_pins(run: str) -> list[str]:
    """The `pkg=VERSION` arguments of the `apt-get install` commands in a RUN line."""
    pins = []
    parts = split_commands(run)
    for part in parts[::2]:
        for piece in re.split(r"(?<![|])\|(?![|])", part):
            piece = piece.strip()
            piece = piece[len(KEYWORD.match(piece).group(0)) :]
            piece = piece[len(PREFIX.match(piece).group(0)) :].strip()
            if m := APT_INSTALL.match(piece):
                pins += [w for w in words_of(m.group(1)) if APT_PIN.match(w)]
    return pins


def unpin(group: list[str], pins: list[str]) -> list[str]:
    """The physical lines of a RUN with each pin (`git=1:2.39.5-0+deb12u2`) replaced by its package."""
    out = []
    for line in group:
        for pin in pins:
            line = re.sub(rf"(?<![\w=+.:~-]){re.escape(pin)}(?![\w=+.:~-])", APT_PIN.match(pin).group(1), line)
        out.append(line)
    return out


def pin_warning(pins: list[str]) -> str:
    return (f"apt-get install pins dropped: {' '.join(pins)} (Debian's mirror keeps only each package's version "
            "in the current point release, so an older exact version can't be installed; the current one is)")  # fmt: skip
