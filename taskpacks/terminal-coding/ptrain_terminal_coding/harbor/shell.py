"""Test and solution scripts made to run offline in a sandbox, changing as few lines as possible.

Lines that install uv, pip packages or apt packages at test time become `true` (the Python packages
they asked for are in the image, see wheels.py), `uvx ... pytest` and `uv run pytest` become the
image's pytest, and /tests, /logs and /solution (the root filesystem is
read-only in a sandbox) move under /tmp. A changed line keeps the original as a comment, and every
change is noted on the ImportResult.
"""

from __future__ import annotations

import re

from ptrain_terminal_coding.harbor.imported import SOLUTION_ROOT, VERIFY_ROOT, ImportResult


def logical_lines(text: str) -> list[tuple[list[str], str]]:
    """Physical lines grouped into commands (backslash continuations joined); heredoc bodies pass as-is."""
    lines, out, i = text.splitlines(), [], 0
    while i < len(lines):
        group = [lines[i]]
        while group[-1].endswith("\\") and i + 1 < len(lines):
            i += 1
            group.append(lines[i])
        i += 1
        joined = " ".join(part[:-1].strip() if part.endswith("\\") else part.strip() for part in group)
        out.append((group, joined))
        heredoc = re.search(r"(?<!<)<<-?(?!<)\s*['\"]?([A-Za-z_]\w*)['\"]?", joined)
        if heredoc:
            body = []
            while i < len(lines) and lines[i].strip() != heredoc.group(1):
                body.append(lines[i])
                i += 1
            body += lines[i : i + 1]
            i += 1
            out += [([line], "") for line in body]
    return out


def split_commands(line: str) -> list[str]:
    """`line` split into commands and the separators (&&, ||, ;) between them, outside quotes."""
    parts, start, quote, depth, i = [], 0, "", 0, 0
    while i < len(line):
        c = line[i]
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif line.startswith("$(", i):
            depth += 1
        elif c == ")" and depth:
            depth -= 1
        elif c == "#" and (i == 0 or line[i - 1].isspace()) and not depth:
            return parts + [line[start:i]]  # a trailing comment
        elif not depth and (line.startswith("&&", i) or line.startswith("||", i) or c == ";"):
            sep = line[i : i + (1 if c == ";" else 2)]
            parts += [line[start:i], sep]
            i += len(sep)
            start = i
            continue
        i += 1
    return parts + [line[start:]]


KEYWORD = re.compile(r"^\s*(?:(?:then|do|else|elif|if|while|until|!|\{|\()\s+)*")
INSTALLS = [  # commands that fetch or install at test time: apt, curl/wget, pip, uv setup, uv's env
    re.compile(r"^(sudo\s+)?(apt-get|apt|apk|yum|dnf)\s.*\b(update|install|add|upgrade)\b"),
    re.compile(r"^(sudo\s+)?(curl|wget)\s"),
    re.compile(r"^(sudo\s+)?(python3?\s+-m\s+)?(pip3?|uv\s+pip|uv\s+tool)\s+install\b"),
    re.compile(r"^uv\s+(init|add|venv|sync|python\s+install)\b"),
    re.compile(r"^(source|\.)\s+\S*(\.local/bin/env|\.cargo/env|/bin/activate)\b"),
]
UV_VALUE_OPTS = r"-p|--python|-w|--with|--from|--with-requirements|--index-url|--extra-index-url"
UV_OPTS = rf"(?:\s+(?:{UV_VALUE_OPTS})(?:=|\s+)\S+|\s+--(?:isolated|no-project|quiet|offline|frozen)|\s+-q)*"
PYTEST_RUNNERS = re.compile(rf"\b(?:uvx{UV_OPTS}|uv\s+run{UV_OPTS})\s+(?:python3?\s+-m\s+)?pytest\b")
UV_PYTHON = re.compile(rf"\buv\s+run{UV_OPTS}\s+python3?\b")
CTRF = re.compile(r"\s--ctrf(?:=|\s+)\S+")
REPLACEMENTS = ((PYTEST_RUNNERS, "python3 -P -m pytest"), (UV_PYTHON, "python3"), (CTRF, ""))
PATHS = {"/tests": f"{VERIFY_ROOT}/tests", "/logs": f"{VERIFY_ROOT}/logs", "/solution": SOLUTION_ROOT}


def rewrite_paths(text: str, roots: dict[str, str] = PATHS) -> str:
    for old, new in roots.items():
        text = re.sub(rf"(?<![\w.$/}})-]){re.escape(old)}(?![\w.-])", new, text)
    return text


def convert_script(text: str, where: str, result: ImportResult) -> str:
    """A test or solution script with test-time installs dropped and uv's pytest replaced by the image's
    (whose packages are what those installs asked for, offline.py). `--ctrf` goes even where its plugin
    is installed: that plugin's hooks break on the seal's canary test (seal.py), and ptrain reads no CTRF."""
    out, dropped, replaced = [], [], {}
    for group, line in logical_lines(text):
        parts = split_commands(line) if line.strip() and not line.lstrip().startswith("#") else []
        changed = False
        for k in range(0, len(parts), 2):
            prefix = KEYWORD.match(parts[k]).group(0)
            command = parts[k][len(prefix) :].strip()
            if any(pattern.match(command) for pattern in INSTALLS):
                dropped.append(shorten(command, 40))
                parts[k], changed = prefix + "true" + parts[k][len(parts[k].rstrip()) :], True
                continue
            new = command
            for pattern, to in REPLACEMENTS:
                for match in pattern.finditer(new):
                    replaced[shorten(match.group(0).strip(), 40)] = to
                new = pattern.sub(to, new)
            if new != command:
                parts[k], changed = parts[k].replace(command, new), True
        out += ["".join(parts).rstrip() + f"  # ptrain: was `{shorten(line, 200)}`"] if changed else group
    if dropped:
        result.notes.append(f"{where}: dropped test-time installs: {'; '.join(dropped)}")
    for old, new in replaced.items():
        result.notes.append(f"{where}: `{old}` → " + (f"`{new}`" if new else "removed (ptrain reads no CTRF report)"))
    converted = "\n".join(out) + "\n"
    moved = rewrite_paths(converted)
    if moved != converted:
        result.notes.append(f"{where}: moved {moved_roots(converted)} under /tmp (the root filesystem is read-only)")
    return moved


def moved_roots(text: str) -> str:
    return ", ".join(old for old in PATHS if rewrite_paths(text, {old: PATHS[old]}) != text)


def shorten(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"
