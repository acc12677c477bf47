"""`str_replace_editor`: view, create, str_replace, insert and undo_edit, as SWE-agent and OpenHands have it.

Models trained on those harnesses know this tool, so its commands, arguments and messages follow
theirs: absolute paths, `cat -n` views, an exact and unique `old_str`, inserts after a line
number (0 = top), and one undo per edit. The edit history lives in the tool, one per episode.
"""

from __future__ import annotations

import shlex
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ptrain.sandbox.container import Sandbox
from ptrain.taskpack import WORKSPACE, Observation
from ptrain.tools.truncation import MAX_BYTES, MAX_LINES, truncate_middle

SNIPPET_LINES = 4
COMMANDS = ["view", "create", "str_replace", "insert", "undo_edit"]
SCHEMA = {
    "name": "str_replace_editor",
    "description": (
        "View, create and edit files. `view` shows a file with line numbers (or a directory two levels deep); "
        "`create` writes a new file; `str_replace` replaces `old_str`, which must occur exactly once, by `new_str`; "
        "`insert` puts `new_str` after line `insert_line` (0 for the top); `undo_edit` reverts the last edit. "
        "Paths are absolute."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "command": {"type": "string", "enum": COMMANDS},
            "path": {"type": "string", "description": "Absolute path of a file or directory."},
            "file_text": {"type": "string", "description": "Content for `create`."},
            "old_str": {"type": "string", "description": "Exact text to replace (`str_replace`)."},
            "new_str": {"type": "string", "description": "Replacement (`str_replace`) or text to insert (`insert`)."},
            "insert_line": {"type": "integer", "description": "Insert after this line (`insert`)."},
            "view_range": {"type": "array", "description": "[start, end] lines for `view`; end -1 means to the end."},
        },
        "required": ["command", "path"],
    },
}


def numbered(text: str, start: int = 1) -> str:
    return "".join(f"{i:6}\t{line}\n" for i, line in enumerate(text.split("\n"), start))


def snippet(text: str, first_line: int, last_line: int) -> tuple[str, int]:
    """Lines around an edit (1-based, inclusive), with SNIPPET_LINES of context."""
    lines = text.split("\n")
    start = max(1, first_line - SNIPPET_LINES)
    end = min(len(lines), last_line + SNIPPET_LINES)
    return "\n".join(lines[start - 1 : end]), start


@dataclass
class EditorTool:
    name: str = "str_replace_editor"
    schema: Mapping[str, Any] = field(default_factory=lambda: SCHEMA)
    history: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    async def __call__(self, sandbox: Sandbox, arguments: Mapping[str, Any]) -> Observation:
        command, path = arguments["command"], arguments["path"]
        if not path.startswith("/"):
            suggestion = f"{WORKSPACE}/{path}".replace("//", "/")
            return self.error(
                f"The path {path} is not an absolute path, it should start with `/`. Maybe you meant {suggestion}?"
            )
        kind = await self.kind(sandbox, path)
        if command == "create":
            if kind != "none":
                return self.error(f"File already exists at: {path}. Cannot overwrite files using command `create`.")
            if "file_text" not in arguments:
                return self.error("Parameter `file_text` is required for command: create.")
            await sandbox.write_file(path, arguments["file_text"])
            self.history[path].append(None)
            return Observation(f"File created successfully at: {path}")
        if kind == "none":
            return self.error(f"The path {path} does not exist. Please provide a valid path.")
        if kind == "dir":
            if command != "view":
                return self.error(
                    f"The path {path} is a directory and only the `view` command can be used on directories."
                )
            return await self.view_dir(sandbox, path)
        text = (await sandbox.read_file(path)).decode(errors="replace")
        if command == "view":
            return self.view_file(path, text, arguments.get("view_range"))
        if command == "str_replace":
            return await self.str_replace(sandbox, path, text, arguments)
        if command == "insert":
            return await self.insert(sandbox, path, text, arguments)
        return await self.undo(sandbox, path)

    @staticmethod
    def error(message: str) -> Observation:
        return Observation(message, is_error=True)

    @staticmethod
    async def kind(sandbox: Sandbox, path: str) -> str:
        q = shlex.quote(path)
        result = await sandbox.exec(
            f"if [ -d {q} ]; then echo dir; elif [ -e {q} ]; then echo file; else echo none; fi", timeout_s=10
        )
        return result.output.strip() or "none"

    async def view_dir(self, sandbox: Sandbox, path: str) -> Observation:
        q = shlex.quote(path)
        listing = await sandbox.exec(f"find {q} -maxdepth 2 -not -path '*/.*' | sort", timeout_s=30)
        body = truncate_middle(listing.output, MAX_BYTES, MAX_LINES)
        return Observation(
            f"Here's the files and directories up to 2 levels deep in {path}, excluding hidden items:\n{body}"
        )

    def view_file(self, path: str, text: str, view_range: Any) -> Observation:
        if view_range is None:
            body = numbered(text)
            return Observation(
                f"Here's the result of running `cat -n` on {path}:\n{truncate_middle(body, MAX_BYTES, MAX_LINES)}"
            )
        n = len(text.split("\n"))
        if not (isinstance(view_range, list) and len(view_range) == 2 and all(isinstance(v, int) for v in view_range)):
            return self.error("Invalid `view_range`. It should be a list of two integers.")
        start, end = view_range
        if not 1 <= start <= n:
            return self.error(
                f"Invalid `view_range`: {view_range}. Its first element `{start}` should be within the range of lines of the file: [1, {n}]"
            )
        if end == -1:
            end = n
        if not start <= end <= n:
            return self.error(
                f"Invalid `view_range`: {view_range}. Its second element `{end}` should be -1 or within [{start}, {n}]"
            )
        body = numbered("\n".join(text.split("\n")[start - 1 : end]), start)
        return Observation(
            f"Here's the result of running `cat -n` on {path}:\n{truncate_middle(body, MAX_BYTES, MAX_LINES)}"
        )

    async def str_replace(self, sandbox: Sandbox, path: str, text: str, arguments: Mapping[str, Any]) -> Observation:
        if "old_str" not in arguments:
            return self.error("Parameter `old_str` is required for command: str_replace.")
        old, new = arguments["old_str"], arguments.get("new_str", "")
        count = text.count(old) if old else 0
        if count == 0:
            return self.error(f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}.")
        if count > 1:
            lines = [i + 1 for i, line in enumerate(text.split("\n")) if old.split("\n")[0] in line]
            return self.error(
                f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines {lines}. Please ensure it is unique."
            )
        first = text[: text.index(old)].count("\n") + 1
        updated = text.replace(old, new, 1)
        await self.save(sandbox, path, text, updated)
        part, start = snippet(updated, first, first + new.count("\n"))
        return Observation(
            f"The file {path} has been edited. Here's the result of running `cat -n` on a snippet of {path}:\n"
            f"{numbered(part, start)}Review the changes and make sure they are as expected. Edit the file again if necessary."
        )

    async def insert(self, sandbox: Sandbox, path: str, text: str, arguments: Mapping[str, Any]) -> Observation:
        if "insert_line" not in arguments or "new_str" not in arguments:
            return self.error("Parameters `insert_line` and `new_str` are required for command: insert.")
        lines = text.split("\n")
        at, new = arguments["insert_line"], arguments["new_str"]
        if not 0 <= at <= len(lines):
            return self.error(
                f"Invalid `insert_line` parameter: {at}. It should be within the range of lines of the file: [0, {len(lines)}]"
            )
        updated = "\n".join(lines[:at] + new.split("\n") + lines[at:])
        await self.save(sandbox, path, text, updated)
        part, start = snippet(updated, at + 1, at + new.count("\n") + 1)
        return Observation(
            f"The file {path} has been edited. Here's the result of running `cat -n` on a snippet of the edited file:\n"
            f"{numbered(part, start)}Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). "
            "Edit the file again if necessary."
        )

    async def undo(self, sandbox: Sandbox, path: str) -> Observation:
        if not self.history[path]:
            return self.error(f"No edit history found for {path}.")
        previous = self.history[path].pop()
        if previous is None:  # undoing a create
            await sandbox.exec(f"rm -f {shlex.quote(path)}", timeout_s=10)
            return Observation(f"Last edit to {path} undone successfully: the file was removed.")
        await sandbox.write_file(path, previous)
        return Observation(
            f"Last edit to {path} undone successfully. Here's the result of running `cat -n` on {path}:\n{truncate_middle(numbered(previous))}"
        )

    async def save(self, sandbox: Sandbox, path: str, old: str, new: str) -> None:
        self.history[path].append(old)
        await sandbox.write_file(path, new)
