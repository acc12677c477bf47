"""The taskpack's gold solutions as a model's replies: what `--engine gold` rolls out.

Each task's gold tool calls, one a turn, then submit, written in the run's chat format; the
episodes are verified like any others, and the passed ones are demonstrations for
`ptrain train --algo sft`.
"""

from __future__ import annotations

from collections.abc import Iterable

from ptrain.engine.scripted import Reply
from ptrain.rollout.chat import ChatFormat
from ptrain.taskpack import Task, Taskpack, ToolCall


def gold_replies(fmt: ChatFormat, taskpack: Taskpack, tasks: Iterable[Task]) -> Reply:
    """Each task's gold calls, one per turn, then submit; the task is the one whose instruction the prompt holds."""
    golds: dict[str, list[ToolCall]] = {task.instruction: taskpack.gold(task) or [] for task in tasks}

    def reply(prompt: str, turn: int) -> str:
        instruction = max((i for i in golds if i in prompt), key=len, default=None)
        if instruction is None:
            return "I do not know this task."
        calls = golds[instruction]
        call = calls[turn] if turn < len(calls) else ToolCall("submit", {})
        return fmt.assistant_text([call], thought=f"Step {turn + 1}.")

    return reply
