"""A discrete-event simulation of the rollout scheduler, to predict what ptrain does at scales this machine cannot run.

    shapes = [EpisodeShape((Turn(prefill_tokens, decode_tokens, tool_s, context_tokens), ...), setup_s, ...), ...]
    result = simulate(shapes, SimConfig(concurrency=64, mode="async", engine=H200_7B))
    result.episodes_per_min, result.steady()["engine_utilisation"]
    simulate_fleet(shapes, accelerators=512, sandboxes=100_000, engine=H200_7B)   # one point of a scale sweep

This file is the event loop of one replica: its episode workers, warm pool, verifiers and engine. What
it takes and gives back (the episodes' shapes, the engine's cost, the config, the result) is in
ptrain/sim_types.py; the fleet of many replicas, which is one replica simulated and multiplied, is in
ptrain/sim_fleet.py.

What it models, after ptrain/rollout/scheduler.py, ptrain/engine/hf.py and ptrain/sandbox/pool.py:
- `concurrency` episode workers. An episode takes a sandbox from the warm pool (each take starts a
  replacement on a start server of `starts_per_s`, `start_s` late at best), runs its setup, then
  turns: a request to the engine (tokens to prefill, tokens to decode), then its tool calls; then its
  artifact, and it is stored. Its verification waits for one of `verify_concurrency` slots, takes a
  fresh sandbox from the same pool and runs for `verify_s`.
- Lock-step: waves of `concurrency` episodes and one barrier per wave that every episode waits at
  before generating and before its tools, parties leaving as the scheduler's `Barrier`'s do.
- The engine batches continuously, as the hf engine does. An iteration admits the waiting requests
  (up to `max_batch` rows), prefills them (which samples their first token), merges them into the
  batch, decodes one token for every row and retires the finished rows. It costs `prefill_a_s` and
  `prefill_s_per_token` a prefilled token for the prefill; a decode step of `decode_a_s + decode_b_s *
  rows` (or the measured `decode_curve`) plus `decode_kv_s * rows * width`, the width being the
  longest row's context, to which the right-aligned cache pads every row; and `copy_s_per_kv_token *
  rows * width` each time rows join a running batch or leave it (the hf engine copies its whole cache
  then; a paged cache such as vLLM's does not: 0).
- Where the engine shares its cores with the sandboxes (`cpu_cores`, as on this 2-core machine),
  each sandbox in its tools or verifier keeps a core busy and the engine slows to its fair share.

What it leaves out: the sandboxes' own contention (tool times are taken as measured), failures and
retries, the KV budget beyond `max_batch`, policy updates, the network.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Sequence

import numpy as np

from ptrain.sim_types import EpisodeShape, Level, SimConfig, SimResult


def simulate(shapes: Sequence[EpisodeShape], config: SimConfig) -> SimResult:
    """Run these episodes, in this order, through the scheduler; deterministic (no randomness inside)."""
    return _Sim(shapes, config).run()


# --- the simulation -----------------------------------------------------------------------------------------------


class _Episode:
    __slots__ = ("shape", "turn", "barrier", "base")

    def __init__(self, shape: EpisodeShape):
        self.shape, self.turn, self.barrier, self.base = shape, 0, None, 0


class _Barrier:
    """The scheduler's Barrier: released when every party still in the wave has arrived."""

    def __init__(self) -> None:
        self.parties, self.waiting = 0, []

    def wait(self, fn: Callable[[_Episode], None], episode: _Episode) -> None:
        self.waiting.append((fn, episode))
        self.release()

    def release(self) -> None:
        if self.waiting and len(self.waiting) >= self.parties:
            waiting, self.waiting = self.waiting, []
            for fn, episode in waiting:
                fn(episode)


class _Sim:
    def __init__(self, shapes: Sequence[EpisodeShape], config: SimConfig):
        self.c, self.e = config, config.engine
        self.todo = deque(_Episode(s) for s in shapes)
        self.n = len(self.todo)
        self.events: list = []
        self.seq, self.now = 0, 0.0
        self.levels = {name: Level() for name in ("held", "generate", "tools", "verify", "rows")}
        self.stored, self.verified, self.starts, self.busy, self.iteration_tokens = [], [], [], [], []
        self.idle = config.concurrency + config.verify_concurrency if config.pool_size is None else config.pool_size
        self.takers: deque = deque()  # (fn, episode) waiting for a sandbox
        self.interval = 1 / config.starts_per_s
        self.start_free = 0.0
        self.verify_queue: deque = deque()
        self.verify_free = config.verify_concurrency
        self.wave_left = 0
        self.waiting: deque = deque()  # engine requests: episodes
        self.rows: set[_Episode] = set()
        self.finish: list = []  # (step, seq, episode)
        self.step, self.engine_busy, self.kicked, self.tokens = 0, False, False, 0
        self.copying = self.e.copy_s_per_kv_token > 0 or self.e.decode_kv_s > 0
        self.alone = min(config.engine_threads, config.cpu_cores)  # cores the engine has when nothing else runs

    def at(self, t: float, fn: Callable, arg: object = None) -> None:
        self.seq += 1
        heapq.heappush(self.events, (t, self.seq, fn, arg))

    def run(self) -> SimResult:
        if self.c.mode == "lockstep":
            self.at(0.0, self._wave)
        else:
            for _ in range(min(self.c.concurrency, self.n)):
                self.at(0.0, self._next)
        while self.events:
            self.now, _, fn, arg = heapq.heappop(self.events)
            fn(arg)
        wall = max([0.0, *self.stored, *self.verified])
        busy = np.array(self.busy).reshape(-1, 2)
        return SimResult(self.n, wall, self.tokens, np.sort(self.stored), np.sort(self.verified), busy,
                         np.array(self.iteration_tokens), self.levels, np.array(self.starts), self.interval,
                         self.c.verify_concurrency, self.c.mode)  # fmt: skip

    # -- workers, waves and the episode's life --

    def _next(self, _: object = None) -> None:
        if self.todo:
            self._take(self._setup, self.todo.popleft())

    def _wave(self, _: object = None) -> None:
        wave = [self.todo.popleft() for _ in range(min(self.c.concurrency, len(self.todo)))]
        barrier, self.wave_left = _Barrier(), len(wave)
        barrier.parties = len(wave)
        for episode in wave:
            episode.barrier = barrier
            self._take(self._setup, episode)

    def _setup(self, episode: _Episode) -> None:
        self.at(self.now + episode.shape.setup_s, self._turn, episode)

    def _turn(self, episode: _Episode) -> None:
        if episode.turn == len(episode.shape.turns):
            self.at(self.now + episode.shape.artifact_s, self._store, episode)
        elif episode.barrier:
            episode.barrier.wait(self._generate, episode)
        else:
            self._generate(episode)

    def _generate(self, episode: _Episode) -> None:
        self.levels["generate"].add(self.now, 1)
        self.waiting.append(episode)
        if not self.engine_busy and not self.kicked:
            self.kicked = True
            self.at(self.now, self._iterate)  # after everything else due now, as the engine's thread wakes

    def _generated(self, episode: _Episode) -> None:
        self.levels["generate"].add(self.now, -1)
        if episode.barrier:
            episode.barrier.wait(self._tools, episode)
        else:
            self._tools(episode)

    def _tools(self, episode: _Episode) -> None:
        self.levels["tools"].add(self.now, 1)
        self.at(self.now + episode.shape.turns[episode.turn].tool_s, self._tools_done, episode)

    def _tools_done(self, episode: _Episode) -> None:
        self.levels["tools"].add(self.now, -1)
        episode.turn += 1
        self._turn(episode)

    def _store(self, episode: _Episode) -> None:
        self.stored.append(self.now)
        self.levels["held"].add(self.now, -1)
        if episode.shape.verify_s > 0:
            self.verify_queue.append(episode)
            self._verify_next()
        if episode.barrier:
            episode.barrier.parties -= 1
            episode.barrier.release()
            self.wave_left -= 1
            if not self.wave_left and self.todo:
                self._wave()
        else:
            self._next()

    # -- verification --

    def _verify_next(self) -> None:
        while self.verify_free and self.verify_queue:
            self.verify_free -= 1
            self._take(self._verify, self.verify_queue.popleft())

    def _verify(self, episode: _Episode) -> None:
        self.levels["verify"].add(self.now, 1)
        self.at(self.now + episode.shape.verify_s, self._verified, episode)

    def _verified(self, episode: _Episode) -> None:
        self.levels["verify"].add(self.now, -1)
        self.levels["held"].add(self.now, -1)
        self.verified.append(self.now)
        self.verify_free += 1
        self._verify_next()

    # -- the warm pool and its start server --

    def _take(self, fn: Callable[[_Episode], None], episode: _Episode) -> None:
        """A sandbox from the pool (now, or when a start finishes); every take starts a replacement."""
        done = max(self.now + self.c.start_s, self.start_free + self.interval)
        self.start_free = max(self.start_free, self.now) + self.interval
        self.at(done, self._started)
        if self.idle:
            self.idle -= 1
            self.levels["held"].add(self.now, 1)
            fn(episode)
        else:
            self.takers.append((fn, episode))

    def _started(self, _: object = None) -> None:
        self.starts.append(self.now)
        if self.takers:
            fn, episode = self.takers.popleft()
            self.levels["held"].add(self.now, 1)
            fn(episode)
        else:
            self.idle += 1

    # -- the engine --

    def _kv_tokens(self) -> int:
        return len(self.rows) * (self.step + max(r.base for r in self.rows)) if self.rows else 0

    def _iterate(self, _: object = None) -> None:
        self.kicked = False
        if self.engine_busy or not (self.waiting or self.rows):
            return
        e, cost, done = self.e, 0.0, []
        joiners = [self.waiting.popleft() for _ in range(min(len(self.waiting), e.max_batch - len(self.rows)))]
        if joiners:
            had_rows, cost = bool(self.rows), e.prefill_a_s
            for episode in joiners:
                turn = episode.shape.turns[episode.turn]
                cost += e.prefill_s_per_token * turn.prefill_tokens
                self.tokens += turn.decode_tokens
                if turn.decode_tokens <= 1:  # the prefill samples the first token
                    done.append(episode)
                    continue
                episode.base = turn.context_tokens + 1 - self.step
                self.rows.add(episode)
                self.seq += 1
                heapq.heappush(self.finish, (self.step + turn.decode_tokens - 1, self.seq, episode))
            if had_rows and self.copying:
                cost += e.copy_s_per_kv_token * self._kv_tokens()
        decoded = len(self.rows)
        if self.rows:
            width = self.step + max(r.base for r in self.rows) if self.copying else 0
            cost += e.step_s(len(self.rows), width)
            self.step += 1
            left = len(done)
            while self.finish and self.finish[0][0] <= self.step:
                episode = heapq.heappop(self.finish)[2]
                self.rows.discard(episode)
                done.append(episode)
            if len(done) > left and self.rows and self.copying:
                cost += e.copy_s_per_kv_token * self._kv_tokens()
        if self.c.cpu_cores:  # each sandbox in tools or verifying takes up to a core, the engine's threads the rest
            jobs = self.levels["tools"].value + self.levels["verify"].value
            threads = self.c.engine_threads
            cost *= self.alone / min(self.alone, self.c.cpu_cores * threads / (threads + jobs))
        self.engine_busy = True
        self.busy += (self.now, self.now + cost)
        self.iteration_tokens.append(len(joiners) + decoded)
        self.levels["rows"].add(self.now, len(self.rows) + len(done) - self.levels["rows"].value)
        self.at(self.now + cost, self._iterated, done)

    def _iterated(self, done: list[_Episode]) -> None:
        self.engine_busy = False
        for episode in done:
            self._generated(episode)
        if self.waiting or self.rows:
            self._iterate()
        else:
            self.levels["rows"].add(self.now, -self.levels["rows"].value)
