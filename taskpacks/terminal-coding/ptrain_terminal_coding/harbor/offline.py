"""What a task's commands fetch from the network, read from their text before anything is built or run.

Image builds and sandboxes here reach only the package registries, and sandboxes not even those. So
each command of a Dockerfile's RUN line, or of a script a RUN line runs, is read for:
- Python packages it installs (`pip install`, `uv pip install`, `uv add`, `uv tool install`, `uvx --with`):
  those become wheels that the host downloads into the build context (wheels.py);
- uv's installer (`curl https://astral.sh/uv/VERSION/install.sh | sh`): uv is on PyPI, so it
  becomes the `uv` wheel of that version;
- anything else downloaded (`git clone`, `curl`/`wget` of a URL, `pip install git+URL`, `ADD URL`):
  it cannot work offline, and the import says so with the command, before any build is tried; unless
  it is in substitutes.py's table of archives a registry holds unchanged, which dockerfile.py checks first.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from ptrain_terminal_coding.harbor.shell import KEYWORD, logical_lines, shorten, split_commands

PREFIX = re.compile(r"^(?:(?:sudo|exec|time|env(?:\s+\w+=\S*)*|\w+=\S*)\s+)*")
PIP = re.compile(r"^(?:\S*/)?(?:python3?(?:\.\d+)?\s+-m\s+)?(?:pip3?(?:\.\d+)?|uv\s+pip)\s+install\b(.*)$")
UV_TOOL = re.compile(r"^(?:\S*/)?uv\s+(?:tool\s+install|add)\b(.*)$")
UVX = re.compile(r"^(?:\S*/)?(?:uvx|uv\s+tool\s+run|uv\s+run)\b(.*)$")
UV_INSTALLER = re.compile(r"https?://astral\.sh/uv/(?:(\d[\w.]*)/)?install\.sh")
FETCHERS = re.compile(r"^(?:\S*/)?(curl|wget)\b(.*)$")
GIT_CLONE = re.compile(r"^(?:\S*/)?git\s+(?:-\S+\s+)*(clone|fetch|pull|submodule\s+update)\b")
URL = re.compile(r"\b(?:https?|ftp)://[^\s'\"]+")
VALUE_OPTS = {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-c", "--constraint", "--target",
              "-t", "--prefix", "--root", "--python", "-p", "--platform", "--python-version", "--implementation",
              "--abi", "--retries", "--timeout", "--cache-dir", "--src", "--trusted-host", "--progress-bar",
              "--log", "--proxy", "--upgrade-strategy", "--config-settings", "-C", "--global-option",
              "--from", "--index", "--default-index"}  # fmt: skip
REQUIREMENT_FILES = {"-r", "--requirement", "--requirements", "--with-requirements"}
WITH = {"-w", "--with"}


@dataclass
class Needs:
    """What some commands fetch: Python requirements, and downloads that can't happen offline."""

    requirements: list[str] = field(default_factory=list)  # pip requirement specifiers, in order
    downloads: list[str] = field(default_factory=list)  # commands that fetch from the network, shortened
    python: list[str] = field(default_factory=list)  # Python versions asked for (`uvx -p 3.13`)

    def add(self, other: Needs) -> None:
        self.requirements = distinct(self.requirements + other.requirements)
        self.downloads = list(dict.fromkeys(self.downloads + other.downloads))
        self.python = list(dict.fromkeys(self.python + other.python))


def commands(text: str) -> list[str]:
    """The simple commands of a shell text (continuations joined, split at && || ; and pipes),
    without `if`/`then` keywords or leading `sudo`/`VAR=value`."""
    out = []
    for _, line in logical_lines(text):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = split_commands(line)
        for part in parts[::2]:
            for piece in re.split(r"(?<![|])\|(?![|])", part):
                piece = piece.strip()
                piece = piece[len(KEYWORD.match(piece).group(0)) :]
                piece = piece[len(PREFIX.match(piece).group(0)) :].strip()
                if piece:
                    out.append(piece)
    return out


def words_of(args: str) -> list[str]:
    try:
        return shlex.split(args, comments=True)
    except ValueError:
        return args.split()


def pip_requirements(args: str, context: Path | None, needs: Needs, command: str) -> None:
    """The requirements of `pip install ARGS` (files given with -r read from the build context)."""
    words, i = words_of(args), 0
    if "--no-index" in words:
        return  # it installs from files already in the image
    while i < len(words):
        word = words[i]
        name, eq, value = word.partition("=")
        if word in REQUIREMENT_FILES or (eq and name in REQUIREMENT_FILES):
            path = value if eq else (words[i + 1] if i + 1 < len(words) else "")
            i += 1 if eq else 2
            requirement_file(path, context, needs, command)
            continue
        if word in VALUE_OPTS:
            i += 2
            continue
        i += 1
        if not word or word.startswith(("-", "$", "<", ">", "&")) or re.match(r"^\d*[<>]", word):
            continue  # an option, a variable or a redirection
        if "://" in word or word.startswith("git+"):
            needs.downloads.append(f"`{shorten(command)}` installs {word} from a URL")
        elif word.startswith((".", "/")) or word.endswith((".whl", ".tar.gz", ".zip")):
            continue  # a local project or file: it builds from what is already in the image
        else:
            needs.requirements.append(word)


def requirement_file(path: str, context: Path | None, needs: Needs, command: str) -> None:
    found = find_in_context(path, context)
    if found is None:
        needs.downloads.append(f"`{shorten(command)}` reads {path}, which is not in the build context")
        return
    for line in found.read_text(errors="replace").splitlines():
        line = line.split(" #", 1)[0].strip()
        if line and not line.startswith("#"):
            pip_requirements(line, context, needs, command)


def find_in_context(path: str, context: Path | None) -> Path | None:
    """A file named in an image path (`/tmp/requirements.txt`, `requirements.txt`) found in the
    build context, by its path or else by its name."""
    if context is None or not path or "$" in path:
        return None
    rel = path.lstrip("/")
    for candidate in (context / rel, *sorted(context.rglob(Path(rel).name))):
        if candidate.is_file():
            return candidate
    return None


def uv_with(args: str, needs: Needs) -> None:
    words = words_of(args)
    for i, word in enumerate(words):
        name, eq, value = word.partition("=")
        if word in WITH or (eq and name in WITH):
            for spec in (value if eq else words[i + 1] if i + 1 < len(words) else "").split(","):
                if spec and not spec.startswith("-"):
                    needs.requirements.append(spec)
        elif word in ("-p", "--python") or (eq and name in ("-p", "--python")):
            version = value if eq else words[i + 1] if i + 1 < len(words) else ""
            if version:
                needs.python.append(version)
        elif not word.startswith("-") and (i == 0 or words[i - 1] not in VALUE_OPTS | WITH | {"-p", "--python"}):
            if word not in ("python", "python3") and re.match(r"^[A-Za-z][\w.-]*([<>=!~]=?.*)?$", word):
                needs.requirements.append(word)  # the tool itself: `uvx pytest==8.4.1`
            break


def requirement_name(spec: str) -> str:
    return re.split(r"[<>=!~\[;@ ]", spec, maxsplit=1)[0].lower().replace("_", "-")


def distinct(requirements: list[str]) -> list[str]:
    """Requirements once each; a bare name is left out where the same name comes with a version."""
    pinned = {requirement_name(r) for r in requirements if requirement_name(r) != r.lower().replace("_", "-")}
    out = []
    for r in requirements:
        if r not in out and not (requirement_name(r) in pinned and requirement_name(r) == r.lower().replace("_", "-")):
            out.append(r)
    return out


def needs_of(text: str, context: Path | None = None, build: bool = True) -> Needs:
    """What the commands in `text` fetch. At build time (`build`) a URL download is one that fails
    here; in a test or solution script, installs are dropped anyway (shell.py) and only packages count."""
    needs = Needs()
    scan(text, context, build, needs)
    needs.requirements = distinct(needs.requirements)
    needs.downloads = list(dict.fromkeys(needs.downloads))
    needs.python = list(dict.fromkeys(needs.python))
    return needs


def scan(text: str, context: Path | None, build: bool, needs: Needs) -> None:
    for command in commands(text):
        if (m := PIP.match(command)) or (m := UV_TOOL.match(command)):
            pip_requirements(m.group(1), context, needs, command)
        elif m := UVX.match(command):
            uv_with(m.group(1), needs)
        elif m := FETCHERS.match(command):
            installer = UV_INSTALLER.search(command)
            if installer:
                needs.requirements.append(f"uv=={installer.group(1)}" if installer.group(1) else "uv")
            elif build and URL.search(m.group(2)):
                needs.downloads.append(f"`{shorten(command)}` downloads {shorten(URL.search(m.group(2)).group(0))}")
        elif build and GIT_CLONE.match(command):
            needs.downloads.append(f"`{shorten(command)}` needs a git server")


def scripts_run(run: str, context: Path) -> list[Path]:
    """Shell scripts of the build context that a RUN line names (and so probably runs)."""
    found = []
    for word in words_of(run):
        path = find_in_context(word, context) if re.search(r"[\w-]\.(sh|bash)$", word) else None
        if path and path.stat().st_size < 1 << 20 and path not in found:
            found.append(path)
    return found
