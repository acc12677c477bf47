"""The taskpack's gold solutions as a model's replies: what `--engine gold` rolls out.

Each task's gold tool calls, one a turn, then submit, written in the run's chat format; the
episodes are verified like any others, and the passed ones are demonstrations for
`ptrain train --algo sft`. The task is named by the request (`Sampling.task_id`): tasks may share an
instruction (every mutant of a project has one of five), so the prompt alone cannot tell them apart.
"""

from __future__ import annotations

from collections.abc import Iterable

from ptrain.engine.scripted import TaskReply
from ptrain.rollout.chat import ChatFormat
from ptrain.taskpack import Task, Taskpack, ToolCall


def gold_replies(fmt: ChatFormat, taskpack: Taskpack, tasks: Iterable[Task]) -> TaskReply:
    """Each task's gold calls, one per turn, then submit. The task is the episode's (its id comes with
    the request); without one, the task whose instruction the prompt holds (the longest that fits)."""
    by_id = {task.id: task for task in tasks}
    golds: dict[str, list[ToolCall]] = {}

    def calls_of(task: Task) -> list[ToolCall]:
        if task.id not in golds:
            golds[task.id] = taskpack.gold(task) or []
        return golds[task.id]

    def reply(prompt: str, turn: int, task_id: str = "") -> str:
        task = by_id.get(task_id) or max((t for t in by_id.values() if t.instruction in prompt),
                                         key=lambda t: len(t.instruction), default=None)  # fmt: skip
        if task is None:
            return "I do not know this task."
        calls = calls_of(task)
        call = calls[turn] if turn < len(calls) else ToolCall("submit", {})
        return fmt.assistant_text([call], thought=f"Step {turn + 1}.")

    return reply
