"""A scripted engine: replies written by a function instead of sampled, for `--engine gold` and tests.

It satisfies the `Engine` protocol, so the episode loop and the scheduler run unchanged against
real sandboxes, taskpacks and stores, with replies known in advance (gold solutions, malformed
calls, a failure on the n-th request). The replies come from a function of the prompt's text and
the turn; `ptrain/rollout/gold.py` writes the one that replays each task's gold tool calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ptrain.engine.base import Completion, EngineStats, Sampling
from ptrain.errors import EngineError

Reply = Callable[[str, int], str]  # (the prompt as text, the turn number) -> the model's text
TaskReply = Callable[[str, int, str], str]  # the same, also given the episode's task id


class Text(Protocol):
    """What the engine needs of a chat format (ptrain/rollout/chat.py's ChatFormat): ids to text and back."""

    end_id: int

    def render_text(self, token_ids: Sequence[int]) -> str: ...

    def encode(self, text: str) -> list[int]: ...


@dataclass
class ScriptedEngine:
    fmt: Text
    reply: Reply | TaskReply
    per_task: bool = False  # `reply` takes the task id too (tasks may share an instruction, hence a prompt)
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
        text = self.reply(prompt, turn, sampling.task_id) if self.per_task else self.reply(prompt, turn)
        ids = self.fmt.encode(text)[: sampling.max_new_tokens - 1]
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
