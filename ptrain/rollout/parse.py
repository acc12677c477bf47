"""Tool calls out of the text of one model turn, in either of ptrain's two action formats.

    hermes  JSON calls in tags, as Hermes and Qwen models write them:
                <tool_call>
                {"name": "bash", "arguments": {"command": "ls"}}
                </tool_call>
    bash    one fenced block per turn, taken as a `bash` call, as mini-swe-agent does:
                ```bash
                ls
                ```
            A block whose first line is `submit` (or mini-swe-agent's
            `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`) is a `submit` call instead; the rest of
            that block is not run.

`parse_tool_calls` never raises. Whatever is wrong with the *form* of a turn (no call, JSON that
does not parse, a missing name, unknown keys, an unclosed block, more calls than a turn allows)
becomes an error the model reads in its next observation, saying what was expected. Whether a
tool of that name exists and takes those arguments is the dispatcher's business, not the parser's.

Leniency, only where the intent is unambiguous: JSON strings may hold raw newlines and tabs; a
trailing comma, missing closing brackets at the very end, a ```json fence inside the tags, a
missing `</tool_call>` after a complete object, `arguments` given as a JSON string (or as
`parameters`, Llama style) or left out (no arguments), a JSON list of calls. Anything else is an
error, never a guess. The JSON inside the tags is read with a real JSON decoder, so a string
argument may contain `</tool_call>` itself.

Calls beyond `max_calls` are not run: each is named in an error, never dropped silently.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from ptrain.taskpack import Observation, ToolCall

ActionFormat = Literal["hermes", "bash"]
FORMATS: tuple[str, ...] = ("hermes", "bash")

OPEN, CLOSE = "<tool_call>", "</tool_call>"
HERMES_EXAMPLE = '<tool_call>\n{"name": "<tool name>", "arguments": {<arguments as a JSON object>}}\n</tool_call>'
BASH_EXAMPLE = "```bash\n<one command>\n```"
BASH_LANGUAGES = ("bash", "sh", "shell")
SUBMIT_LINES = ("submit",)
SUBMIT_MARKER = (
    "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"  # mini-swe-agent's: `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`
)
FENCE = re.compile(r"^[ \t]{0,3}```[ \t]*([\w+-]*)[ \t\r]*$")
SUBMIT_ECHO = re.compile(rf"^echo\s+['\"]?{SUBMIT_MARKER}\b")
DECODER = json.JSONDecoder(strict=False)  # strict=False: raw newlines and tabs inside strings


@dataclass(frozen=True)
class ParsedTurn:
    calls: list[ToolCall]  # to run, in order
    errors: list[str] = field(default_factory=list)  # for the model to read
    text: str = ""  # the turn outside its calls (the model's reasoning)

    def error_observation(self) -> Observation | None:
        """The errors as one observation for the model, or None when there are none."""
        return Observation("\n".join(self.errors), is_error=True) if self.errors else None


def parse_tool_calls(text: str, format: ActionFormat = "hermes", max_calls: int = 1) -> ParsedTurn:
    """The calls in one model turn, and what is wrong with its form. Never raises on any text."""
    if format == "hermes":
        calls, errors, outside = _hermes(text)
        example = HERMES_EXAMPLE
    elif format == "bash":
        calls, errors, outside = _bash(text)
        example = BASH_EXAMPLE
    else:
        raise ValueError(f"unknown action format {format!r}; expected one of {FORMATS}")
    if len(calls) > max_calls:
        extra = calls[max_calls:]
        calls = calls[:max_calls]
        per_turn = "one call" if max_calls == 1 else f"{max_calls} calls"
        names = ", ".join(f"`{c.name}`" for c in extra)
        errors.append(f"Only {per_turn} per turn is run; not run: {names}. Make the rest in your next turns.")
    if not calls and not errors:
        hint = (
            " A JSON call must be inside <tool_call></tool_call> tags."
            if format == "hermes" and '"name"' in text
            else ""
        )
        errors.append(f"No tool call found.{hint} Reply with:\n{example}")
    return ParsedTurn(calls, errors, outside.strip())


# --- hermes ------------------------------------------------------------------------------------


def _hermes(text: str) -> tuple[list[ToolCall], list[str], str]:
    calls: list[ToolCall] = []
    errors: list[str] = []
    outside: list[str] = []
    pos, n = 0, 0
    while (start := text.find(OPEN, pos)) >= 0:
        n += 1
        outside.append(text[pos:start])
        value, pos, error = _read_json(text, start + len(OPEN))
        if error is None:
            found, error = _calls_of(value)
            calls.extend(found)
        if error is not None:
            errors.append(f"Tool call {n} was not run: {error}. Write each call as:\n{HERMES_EXAMPLE}")
    outside.append(text[pos:])
    return calls, errors, "".join(outside)


def _read_json(text: str, i: int) -> tuple[Any, int, str | None]:
    """The JSON value after an opening tag, where the call ends, and an error (or None)."""
    i = _skip_space(text, i)
    fenced = text.startswith("```", i)
    if fenced:  # ```json ... ``` inside the tags
        newline = text.find("\n", i)
        i = _skip_space(text, len(text) if newline < 0 else newline + 1)
    try:
        value, j = DECODER.raw_decode(text, i)
    except (ValueError, RecursionError) as e:
        return _repaired(text, i, e)
    k = _skip_space(text, j)
    if fenced and text.startswith("```", k):
        k = _skip_space(text, k + 3)
    if text.startswith(CLOSE, k):
        return value, k + len(CLOSE), None
    if k == len(text) or text.startswith(OPEN, k):  # unclosed, but the object is complete
        return value, k, None
    end = _end_of_call(text, k)
    return None, end, f"unexpected text after the JSON object: {_clip(text[j:end])!r}"


def _repaired(text: str, i: int, error: Exception) -> tuple[Any, int, str | None]:
    """Retry the text up to the closing tag with unambiguous repairs; else say why it is not JSON."""
    end = _end_of_call(text, i)
    body = text[i : end - len(CLOSE) if text.endswith(CLOSE, i, end) else end].strip()
    if body.endswith("```"):
        body = body[:-3].rstrip()
    fixed = _repair_json(body)
    if fixed is not None:
        try:
            return DECODER.decode(fixed), end, None
        except (ValueError, RecursionError):
            pass
    if isinstance(error, json.JSONDecodeError):
        why = f"{error.msg} at line {error.lineno} column {error.colno}"
    else:
        why = "nested too deeply"
    if not body:
        return None, end, "the tags hold no JSON object"
    return None, end, f"its JSON does not parse ({why}) in {_clip(body)!r}"


def _end_of_call(text: str, i: int) -> int:
    """Past the next closing tag, or at the next opening tag or the end, whichever comes first."""
    stop = text.find(OPEN, i)
    stop = len(text) if stop < 0 else stop
    close = text.find(CLOSE, i, stop)
    return stop if close < 0 else close + len(CLOSE)


def _repair_json(body: str) -> str | None:
    """Drop trailing commas and close brackets left open at the end; None if that is not enough."""
    out: list[str] = []
    stack: list[str] = []
    in_string = escaped = False
    pairs = {"{": "}", "[": "]"}
    for ch in body:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in pairs:
            stack.append(pairs[ch])
        elif ch in "}]":
            while out and out[-1].isspace():
                out.pop()
            if out and out[-1] == ",":
                out.pop()
            if not stack or stack.pop() != ch:
                return None
        out.append(ch)
    if in_string or len(stack) > 100:
        return None  # where an unterminated string ends is anyone's guess
    fixed = "".join(out).rstrip().rstrip(",") + "".join(reversed(stack))
    return fixed if fixed != body else None


def _calls_of(value: Any) -> tuple[list[ToolCall], str | None]:
    if isinstance(value, list) and value:  # several calls as one JSON list
        calls = []
        for item in value:
            call, error = _call_of(item)
            if error:
                return [], error
            calls.append(call)
        return calls, None
    call, error = _call_of(value)
    return ([call] if call else []), error


def _call_of(value: Any) -> tuple[ToolCall | None, str | None]:
    if not isinstance(value, dict):
        return None, f"a call must be a JSON object with `name` and `arguments`, got {_json_type(value)}"
    unknown = sorted(set(value) - {"name", "arguments", "parameters"})
    if unknown:
        return None, f"unknown keys {', '.join(map(repr, unknown))} (a call has only `name` and `arguments`)"
    name = value.get("name")
    if not isinstance(name, str) or not name.strip():
        return None, "the call has no `name` (a non-empty string)"
    if "arguments" in value and "parameters" in value:
        return None, "the call has both `arguments` and `parameters`; give only `arguments`"
    arguments = value.get("arguments", value.get("parameters"))
    if arguments is None:
        arguments = {}
    if isinstance(arguments, str):  # some models write the arguments as a JSON string
        try:
            arguments = DECODER.decode(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            return None, "`arguments` is a string that is not a JSON object; give a JSON object"
    if not isinstance(arguments, dict):
        return None, f"`arguments` must be a JSON object, got {_json_type(arguments)}"
    return ToolCall(name, arguments), None


# --- bash --------------------------------------------------------------------------------------


def _bash(text: str) -> tuple[list[ToolCall], list[str], str]:
    """Fenced blocks line by line: an opening fence (with a language), its lines, a closing fence."""
    calls: list[ToolCall] = []
    errors: list[str] = []
    outside: list[str] = []
    others: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if fence is None:
            outside.append(lines[i])
            i += 1
            continue
        language = fence.group(1).lower()
        close = next((j for j in range(i + 1, len(lines)) if _is_closing_fence(lines[j])), None)
        if language not in BASH_LANGUAGES:
            others.append(f"a ```{language} block" if language else "a ``` block without a language")
            stop = len(lines) if close is None else close + 1
            outside.extend(lines[i:stop])
            i = stop
            continue
        if close is None:
            errors.append(f"The ```{language} block is not closed: end it with a line holding only ```.")
            outside.extend(lines[i:])
            break
        command = "\n".join(lines[i + 1 : close])
        i = close + 1
        first = command.strip().split("\n")[0].strip()
        if first in SUBMIT_LINES or SUBMIT_ECHO.match(first):
            calls.append(ToolCall("submit", {}))
        elif not command.strip():
            errors.append("The ```bash block is empty: put one command in it.")
        else:
            calls.append(ToolCall("bash", {"command": command}))
    if not calls and not errors and others:
        errors.append(
            f"Only ```bash blocks are run, and this turn has {' and '.join(others)}. Reply with:\n{BASH_EXAMPLE}"
        )
    return calls, errors, "\n".join(outside)


# --- helpers -----------------------------------------------------------------------------------


def _is_closing_fence(line: str) -> bool:
    fence = FENCE.match(line)
    return fence is not None and not fence.group(1)


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit // 2] + " ... " + text[-limit // 2 :]


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")
