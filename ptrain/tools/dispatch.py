"""Running one tool call: find the tool, check the arguments against its schema, run it.

Whatever the model got wrong (an unknown tool, a missing or mistyped argument, a path that does
not exist) comes back as an error observation it can read and fix; only infrastructure failures
(`SandboxError`) propagate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ptrain.errors import ToolError
from ptrain.sandbox.container import Sandbox
from ptrain.taskpack import Observation, Tool, ToolCall

JSON_TYPES = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "array": list,
    "object": dict,
}


def validate_arguments(schema: Mapping[str, Any], arguments: Any) -> list[str]:
    """Problems with `arguments` under a function schema's `parameters` (top level only)."""
    if not isinstance(arguments, Mapping):
        return [f"arguments must be a JSON object, got {type(arguments).__name__}"]
    params = schema.get("parameters", {})
    props = params.get("properties", {})
    problems = [f"missing required argument `{key}`" for key in params.get("required", []) if key not in arguments]
    for key, value in arguments.items():
        if key not in props:
            problems.append(f"unknown argument `{key}` (known: {', '.join(props) or 'none'})")
            continue
        expected = props[key].get("type")
        py_type = JSON_TYPES.get(expected)
        bad_bool = expected in ("integer", "number") and isinstance(value, bool)
        if py_type and (not isinstance(value, py_type) or bad_bool):
            problems.append(f"`{key}` must be {expected}, got {type(value).__name__}")
        elif "enum" in props[key] and value not in props[key]["enum"]:
            problems.append(f"`{key}` must be one of {props[key]['enum']}, got {value!r}")
    return problems


async def run_tool_call(tools: Sequence[Tool], call: ToolCall, sandbox: Sandbox) -> Observation:
    by_name = {tool.name: tool for tool in tools}
    tool = by_name.get(call.name)
    if tool is None:
        return Observation(f"Unknown tool `{call.name}`. Available tools: {', '.join(by_name)}.", is_error=True)
    problems = validate_arguments(tool.schema, call.arguments)
    if problems:
        return Observation(f"Invalid call to `{call.name}`: {'; '.join(problems)}.", is_error=True)
    try:
        return await tool(sandbox, call.arguments)
    except ToolError as e:
        return Observation(f"Error: {e}", is_error=True)
