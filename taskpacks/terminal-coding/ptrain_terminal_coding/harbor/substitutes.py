"""Downloads from outside the registries that a registry holds byte for byte: an explicit table.

Image builds here reach only PyPI, Debian and npm. Some tasks download a release archive from a
project's own site that its publisher also puts on one of those registries, unchanged: JetBrains
publishes the Kotlin compiler's `kotlin-compiler-V.zip` (its `kotlinc/` folder) on GitHub and, as the
npm package `kotlin-compiler@V`, the same folder as the package's `package/`. For a RUN line that
downloads such an archive to a file (`curl -o F URL`, `wget -O F URL`), unzips it (`unzip F -d DIR`)
and removes it, the host fetches the package once (`npm pack`, cached under `$PTRAIN_HOME/npm/`),
unpacks it, links it into the build context (`ptrain-downloads/`), and the line becomes a COPY into
`DIR/<folder>/` plus what else the line did; the task's notes name the substitution. Anything else
stays a refused download (offline.py).

Offline machines: set PTRAIN_HARBOR_NPM to a directory that already holds `NAME-VERSION.tgz`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ptrain import paths
from ptrain.errors import ConfigError
from ptrain_terminal_coding.harbor.offline import PREFIX, URL, words_of
from ptrain_terminal_coding.harbor.shell import KEYWORD, split_commands

CONTEXT_DIR = "ptrain-downloads"  # in the build context


@dataclass(frozen=True)
class Substitute:
    """A download URL (its version as the group `version`) that the npm package `package` holds: the
    archive's top folder `folder` is the package's `package/`."""

    url: re.Pattern[str]
    package: str
    folder: str
    why: str


TABLE = [
    Substitute(
        re.compile(
            r"^https://github\.com/JetBrains/kotlin/releases/download/v(?P<version>\d[\w.-]*)/"
            r"kotlin-compiler-(?P=version)\.zip$"
        ),
        package="kotlin-compiler",
        folder="kotlinc",
        why="JetBrains' own npm package of the compiler: its package/ is the zip's kotlinc/",
    ),
]


@dataclass(frozen=True)
class Found:
    """A RUN line's download that the table substitutes: the package and what the line becomes."""

    substitute: Substitute
    version: str
    url: str
    dest: str  # where the archive's folder lands: `<unzip -d dir>/<folder>`
    rest: str  # the line's other commands, joined as they were ("" when none is left)


def expand(text: str, env: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: env.get(m.group(1) or m.group(2), m.group(0)), text)


def fetched_file(command: str) -> str | None:
    """The file `curl -o F` / `wget -O F` writes, or None."""
    words = words_of(command)
    tool = os.path.basename(words[0]) if words else ""
    flags = {"curl": ("-o", "--output"), "wget": ("-O", "--output-document")}.get(tool, ())
    for i, word in enumerate(words[1:], 1):
        if word in flags and i + 1 < len(words):
            return words[i + 1]
        if tool == "curl" and re.match(r"^-[a-zA-Z]*o$", word) and i + 1 < len(words):
            return words[i + 1]  # `-fsSLo F`
        for flag in flags:
            if word.startswith(flag + "=") or (len(flag) == 2 and word.startswith(flag) and len(word) > 2):
                return word[len(flag) + (word[len(flag)] == "=") :]
    return None


def unzip_dir(command: str, archive: str) -> str | None:
    """The folder `unzip ... ARCHIVE -d DIR` extracts into, or None when it is another command."""
    words = words_of(command)
    if not words or os.path.basename(words[0]) != "unzip" or archive not in words:
        return None
    for i, word in enumerate(words):
        if word == "-d" and i + 1 < len(words):
            return words[i + 1]
    return None


def removes(command: str, archive: str) -> bool:
    words = words_of(command)
    return bool(words) and words[0] == "rm" and [w for w in words[1:] if not w.startswith("-")] == [archive]


def find(run: str, env: dict[str, str]) -> Found | None:
    """The table's download in a RUN line (its `${VAR}`s expanded from `env`, the ENV and ARG seen so far)
    as `curl -o F URL && unzip F -d DIR [&& rm F]`, or None."""
    parts = split_commands(run)
    commands = []  # (separator before, the command as written, the command without `sudo`, `VAR=x`, `then`)
    for k in range(0, len(parts), 2):
        command = parts[k][len(KEYWORD.match(parts[k]).group(0)) :].strip()
        commands.append((parts[k - 1] if k else "", parts[k].strip(), command[len(PREFIX.match(command).group(0)) :]))
    for i, (_, _, command) in enumerate(commands):
        urls = URL.findall(expand(command, env))
        matched = [(s, m) for s in TABLE for u in urls[:1] if (m := s.url.match(u))]
        archive = fetched_file(expand(command, env)) if matched else None
        if not archive:
            continue
        used, dest = {i}, None
        for j in range(i + 1, len(commands)):
            if dest is None and (d := unzip_dir(expand(commands[j][2], env), archive)):
                used.add(j)
                dest = d
            elif dest is not None and removes(expand(commands[j][2], env), archive):
                used.add(j)
        if dest is None or any(commands[j][0] not in ("", "&&", ";") for j in used if j):
            return None
        substitute, m = matched[0]
        return Found(substitute, m["version"], m.group(0), f"{dest.rstrip('/')}/{substitute.folder}",
                     rest(commands, used))  # fmt: skip
    return None


def rest(commands: list[tuple[str, str, str]], used: set[int]) -> str:
    """The commands of the line that are not the download: a `|| fallback` right after the download
    is left out too (the copy succeeds, so it would never run)."""
    out = []
    for i, (sep, command, _) in enumerate(commands):
        if i in used or (sep == "||" and not out):
            continue
        out += [sep, command] if out else [command]
    return " ".join(out)


def fetch(package: str, version: str) -> Path:
    """The unpacked `package/` of `npm pack PACKAGE@VERSION`: from the cache, or fetched into it once."""
    folder = paths.home() / "npm" / f"{package}-{version}"
    if (folder / ".complete").is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent, prefix=".pack-") as tmp:
        given = Path(os.environ.get("PTRAIN_HARBOR_NPM", "/nonexistent")) / f"{package}-{version}.tgz"
        if given.is_file():
            tgz = given
        else:
            cmd = ["npm", "pack", f"{package}@{version}", "--pack-destination", tmp, "--silent"]
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            except FileNotFoundError:
                done = subprocess.CompletedProcess(cmd, 127, "", "npm is not installed on this machine")
            if done.returncode != 0:
                raise ConfigError(
                    f"`npm pack {package}@{version}` failed: {done.stderr.strip()[-600:]}",
                    fix="check that npm and its registry are reachable, or set PTRAIN_HARBOR_NPM to a "
                    f"directory holding {package}-{version}.tgz",
                )
            tgz = Path(tmp) / f"{package}-{version}.tgz"
        out = Path(tmp) / "out"
        with tarfile.open(tgz) as tar:
            tar.extractall(out, filter="data")  # keeps the executables' mode, drops anything outside
        (out / "package" / ".complete").write_text(f"{package}@{version}\n")
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(out / "package", folder)
    return folder


def note(found: Found, context_name: str) -> str:
    s = found.substitute
    return (f"Dockerfile: {found.url} is npm's {s.package}@{found.version} ({s.why}), fetched on the host "
            f"into {context_name}/ and copied to {found.dest}/")  # fmt: skip


def place(found: Found, context: Path) -> str:
    """The package linked (or copied) into the build context; its folder there."""
    source = fetch(found.substitute.package, found.version)
    name = f"{CONTEXT_DIR}/{found.substitute.package}-{found.version}"
    target = context / name
    if not target.exists():
        shutil.copytree(source, target, copy_function=link, ignore=shutil.ignore_patterns(".complete"))
    return name


def link(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another filesystem
        shutil.copy2(source, target)


def steps(found: Found, context_name: str, line: str) -> list[str]:
    """The Containerfile lines for the RUN `line`: the original as a comment, the COPY, then the rest."""
    lines = [f"# ptrain: was `RUN {line}`", f"COPY {context_name}/ {found.dest}/"]
    if found.rest:
        lines.append(f"RUN {found.rest}")
    return lines
