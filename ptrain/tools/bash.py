"""`bash`: a command in the episode's persistent shell, its output truncated for the model."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ptrain.sandbox.container import Sandbox
from ptrain.taskpack import Observation
from ptrain.tools.truncation import MAX_BYTES, MAX_LINES, truncate_middle

SCHEMA = {
    "name": "bash",
    "description": (
        "Run a bash command in a persistent shell (cd and environment variables persist between calls). "
        "No network. Long output is cut in the middle. Commands past their timeout are killed."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command to run."},
            "timeout_s": {"type": "number", "description": "Seconds before the command is killed (default 120)."},
        },
        "required": ["command"],
    },
}


@dataclass
class BashTool:
    default_timeout_s: float = 120.0
    max_timeout_s: float = 600.0
    max_bytes: int = MAX_BYTES
    max_lines: int = MAX_LINES
    name: str = "bash"
    schema: Mapping[str, Any] = field(default_factory=lambda: SCHEMA)

    async def __call__(self, sandbox: Sandbox, arguments: Mapping[str, Any]) -> Observation:
        timeout_s = min(float(arguments.get("timeout_s", self.default_timeout_s)), self.max_timeout_s)
        if timeout_s <= 0:
            return Observation("timeout_s must be positive.", is_error=True)
        # the agent keeps 4x the budget so the head+tail cut here sees real line boundaries
        result = await sandbox.exec(str(arguments["command"]), timeout_s=timeout_s, max_output_bytes=4 * self.max_bytes)
        text = truncate_middle(result.output, self.max_bytes, self.max_lines)
        if result.timed_out:
            text += f"\n[command timed out after {timeout_s:g} s and was killed]"
        elif result.exit_code != 0:
            text += f"\n[exit code {result.exit_code}]"
        return Observation(text, is_error=result.timed_out or result.exit_code != 0)
