"""One `generate` call inside the hf engine, from its queue to the `Completion` it answers with.

The caller's asyncio loop waits on `future`; the engine's worker thread owns everything else once
the request is queued: admission (`ptrain.engine.admission`) sets what it reuses, the batch
(`ptrain.engine.hf_batch`) appends its tokens and settles it. torch releases the GIL during forward
passes, so the loops that call `generate` keep running; the outcome goes back to the caller's loop
with `loop.call_soon_threadsafe`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time

import torch

from ptrain.engine.base import Completion, Sampling
from ptrain.engine.prefix_cache import PrefixEntry


@dataclasses.dataclass(eq=False)
class Request:
    """One `generate` call; the worker thread owns it once it is queued."""

    token_ids: list[int]
    sampling: Sampling
    max_new_tokens: int  # clamped to the context window
    generator: torch.Generator | None
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future
    queued_at: float = dataclasses.field(default_factory=time.monotonic)
    admitted_at: float = 0.0
    overtaken: int = 0
    cancelled: bool = False
    policy_version: int = 0
    tokens: list[int] = dataclasses.field(default_factory=list)
    logprobs: list[float] = dataclasses.field(default_factory=list)
    finish_reason: str | None = None
    prefix: PrefixEntry | None = None  # the KV it reuses for its first `reuse` tokens
    reuse: int = 0
    epoch: int = 0  # the weights epoch it was prefilled in

    def completion(self, now: float) -> Completion:
        """What it generated, for a request that finished at `now`."""
        return Completion(
            token_ids=tuple(self.tokens),
            logprobs=tuple(self.logprobs),
            finish_reason=self.finish_reason,
            policy_version=self.policy_version,
            prompt_tokens=len(self.token_ids),
            queued_s=self.admitted_at - self.queued_at,
            generate_s=now - self.admitted_at,
        )

    def settle(self, outcome: Completion | BaseException) -> None:
        with contextlib.suppress(RuntimeError):  # the caller's loop is closed: nobody is waiting
            self.loop.call_soon_threadsafe(_deliver, self.future, outcome)


def _deliver(future: asyncio.Future, outcome: Completion | BaseException) -> None:
    if future.done():  # cancelled by the caller
        return
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)
