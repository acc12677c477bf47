"""Lock-step pacing: the barrier that makes `mode="lockstep"` the synchronous baseline benchmarks compare against.

The scheduler runs a wave of `concurrency` episodes with one `Barrier`; `run_episode` awaits it
before each model turn and each round of tools (its `Pacing`), so every episode in the wave
generates, then every one runs its tools. Parties come and go: an attempt joins when it starts and
leaves when it ends (stored, failed or about to retry), so the wave never waits for one that is gone.
"""

from __future__ import annotations

import asyncio


class Barrier:
    """A reusable barrier whose parties come and go: lock-step's 'everyone generates, then everyone acts'."""

    def __init__(self) -> None:
        self.parties = 0
        self.arrived = 0
        self.release = asyncio.Event()

    def join(self) -> None:
        self.parties += 1

    def leave(self) -> None:
        self.parties -= 1
        self._maybe_release()

    async def wait(self) -> None:
        self.arrived += 1
        release = self.release
        self._maybe_release()
        await release.wait()

    def _maybe_release(self) -> None:
        if self.arrived and self.arrived >= self.parties:
            self.release.set()
            self.release, self.arrived = asyncio.Event(), 0
