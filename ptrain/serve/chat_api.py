"""OpenAI chat messages to and from ptrain's chat format, for `ptrain serve`'s chat endpoint.

In: messages (system, user, assistant with `tool_calls`, tool) and OpenAI `tools`, laid out as ChatML
ids exactly as an episode's ids are (ptrain/rollout/chat.py). Out: a reply's text as an OpenAI
assistant message, its Hermes `<tool_call>` blocks as `tool_calls`. A malformed message is a
`BadRequest`, which the server answers with a 400.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

from ptrain.rollout.chat import ChatFormat
from ptrain.rollout.parse import OPEN, parse_tool_calls
from ptrain.taskpack import Observation, ToolCall

MAX_CALLS = 64  # tool calls read from one reply (all are returned; the harness decides what to run)


class BadRequest(Exception):
    """What was wrong with a request; the client gets it with `status`."""

    def __init__(self, message: str, status: int = 400, kind: str = "BadRequestError"):
        super().__init__(message)
        self.status, self.kind = status, kind


def chat_prompt_ids(fmt: ChatFormat, messages: Any, tools: Sequence[dict[str, Any]]) -> list[int]:
    """OpenAI messages as ChatML ids, laid out exactly as ChatFormat lays out an episode.

    The tools go into the (first) system message as ChatFormat writes them. An assistant's text, with
    its `tool_calls` written back as `<tool_call>` blocks, follows the generation prompt as a
    completion does, tokenized on its own. Consecutive tool messages become one tool message of
    `<tool_response>` blocks, as ChatFormat.tool_result_ids makes them."""
    if not isinstance(messages, list) or not messages:
        raise BadRequest("`messages` must be a non-empty list of {role, content} objects")
    turns = [_turn(fmt, i, m) for i, m in enumerate(messages)]
    if turns[0][0] == "system" or tools:
        system = turns.pop(0)[1] if turns[0][0] == "system" else ""
        turns.insert(0, ("system", fmt.system_text(system, tools).lstrip()))
    merged: list[tuple[str, list[str]]] = []
    for role, text in turns:
        if role == "tool" and merged and merged[-1][0] == "tool":
            merged[-1][1].append(text)
        else:
            merged.append((role, [text]))
    ids: list[int] = []
    newline = fmt.encode("\n")
    for role, texts in merged:
        if role == "assistant":
            ids += fmt.generation_prompt_ids() + fmt.encode(texts[0]) + [fmt.end_id] + newline
            continue
        text = fmt.tool_text([Observation(t) for t in texts]) if role == "tool" else texts[0]
        role = fmt.tool_role if role == "tool" else role
        ids += [fmt.start_id, *fmt.encode(f"{role}\n{text}"), fmt.end_id, *newline]  # ChatFormat's message
    return ids + fmt.generation_prompt_ids()


def _turn(fmt: ChatFormat, i: int, message: Any) -> tuple[str, str]:
    where = f"messages[{i}]"
    if not isinstance(message, dict):
        raise BadRequest(f"{where} must be an object with `role` and `content`")
    role = {"developer": "system"}.get(message.get("role"), message.get("role"))
    if role not in ("system", "user", "assistant", "tool"):
        raise BadRequest(f"{where} has role {message.get('role')!r}; expected system, user, assistant or tool")
    text = _content(message.get("content"), where)
    calls = message.get("tool_calls") or []
    if calls and role != "assistant":
        raise BadRequest(f"{where} has tool_calls, which only an assistant message may have")
    if calls:
        text = fmt.assistant_text([_call(c, f"{where}.tool_calls[{j}]") for j, c in enumerate(calls)], thought=text)
    return role, text


def _content(content: Any, where: str) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in content):
        return "".join(str(p.get("text", "")) for p in content)
    raise BadRequest(f"{where}.content must be a string or a list of text parts; this server reads only text")


def _call(call: Any, where: str) -> ToolCall:
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise BadRequest(f"{where} must be {{'type': 'function', 'function': {{'name': ..., 'arguments': ...}}}}")
    arguments = function.get("arguments") or "{}"
    try:
        arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError as e:
        raise BadRequest(f"{where}.function.arguments is not JSON: {e}") from e
    if not isinstance(arguments, dict):
        raise BadRequest(f"{where}.function.arguments must be a JSON object")
    return ToolCall(function["name"], arguments, str(call.get("id", "")))


def tool_schemas(tools: Any) -> list[dict[str, Any]]:
    if tools is None:
        return []
    ok = isinstance(tools, list) and all(
        isinstance(t, dict) and isinstance(t.get("function"), dict) and isinstance(t["function"].get("name"), str)
        for t in tools
    )
    if not ok:
        raise BadRequest("`tools` must be a list of {'type': 'function', 'function': {'name', 'description', ...}}")
    return [t["function"] for t in tools]


def assistant_message(text: str, parse_tools: bool = True) -> dict[str, Any]:
    """A reply's text as an OpenAI assistant message: Hermes `<tool_call>` blocks become `tool_calls`.

    Calls that do not parse stay in `content`, and what was wrong with them is in
    `ptrain_tool_call_errors`, so a harness can tell the model."""
    message: dict[str, Any] = {"role": "assistant", "content": text, "tool_calls": []}
    if not parse_tools or OPEN not in text:
        return message
    turn = parse_tool_calls(text, "hermes", max_calls=MAX_CALLS)
    if turn.errors:
        message["ptrain_tool_call_errors"] = turn.errors
    if turn.calls:
        message["content"] = turn.text or None
        message["tool_calls"] = [
            {
                "id": f"call_{uuid.uuid4().hex[:24]}",
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(dict(c.arguments), ensure_ascii=False)},
            }
            for c in turn.calls
        ]
    return message
