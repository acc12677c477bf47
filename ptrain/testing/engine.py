"""A scripted engine: replies written by a function instead of sampled, for tests and demos.

It satisfies the `Engine` protocol, so the episode loop and the scheduler run unchanged against
real sandboxes, taskpacks and stores, with replies known in advance (gold solutions, malformed
calls, a failure on the n-th request). `gold_replies` replays each task's gold tool calls turn by
turn, finding the task by its instruction in the prompt.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ptrain.engine.base import Completion, EngineStats, Sampling
from ptrain.errors import EngineError
from ptrain.rollout.chat import ChatFormat
from ptrain.taskpack import Task, Taskpack, ToolCall

Reply = Callable[[str, int], str]  # (the prompt as text, the turn number) -> the model's text


@dataclass
class ScriptedEngine:
    fmt: ChatFormat
    reply: Reply
    delay_s: float = 0.0  # pretend generation takes this long
    fail_on: set[int] = field(default_factory=set)  # request numbers (from 1) that raise EngineError
    context_window: int = 8192
    name: str = "scripted"
    model: str = "scripted"
    policy_version: int = 0
    counters: EngineStats = field(default_factory=EngineStats)

    async def generate(self, token_ids: Sequence[int], sampling: Sampling) -> Completion:
        self.counters.requests += 1
        if self.counters.requests in self.fail_on:
            raise EngineError(f"scripted failure of request {self.counters.requests}")
        prompt = self.fmt.render_text(token_ids)
        turn = prompt.count("<|im_start|>assistant") - 1
        ids = self.fmt.encode(self.reply(prompt, turn))[: sampling.max_new_tokens - 1]
        ids.append(self.fmt.end_id)
        self.counters.running += 1
        try:
            await asyncio.sleep(self.delay_s)
        finally:
            self.counters.running -= 1
        self.counters.busy_s += self.delay_s
        self.counters.prompt_tokens += len(token_ids)
        self.counters.generated_tokens += len(ids)
        return Completion(tuple(ids), (0.0,) * len(ids), "stop", self.policy_version, len(token_ids))

    def stats(self) -> EngineStats:
        return EngineStats(**{**vars(self.counters), "extra": {}})

    async def close(self) -> None:
        return None


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
