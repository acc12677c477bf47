"""A discrete-event simulation of the rollout scheduler, to predict what ptrain does at scales this machine cannot run.

    shapes = [EpisodeShape((Turn(prefill_tokens, decode_tokens, tool_s, context_tokens), ...), setup_s, ...), ...]
    result = simulate(shapes, SimConfig(concurrency=64, mode="async", engine=H200_7B))
    result.episodes_per_min, result.steady()["engine_utilisation"]
    simulate_fleet(shapes, accelerators=512, sandboxes=100_000, engine=H200_7B)   # one point of a scale sweep

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

Scale (`simulate_fleet`): N engine replicas and S sandboxes. An episode stays on one replica, and
replicas share nothing but the tool hosts, whose start capacity is divided evenly; so the fleet is N
copies of one replica with S/N sandboxes and 1/N of the start rate: one replica is simulated and its
rates multiplied. That is exact for async. For lock-step it puts the barrier inside a replica, which
is kind to lock-step (a fleet-wide barrier waits for the slowest of more episodes), so the async
advantage it shows is a lower bound. How far to trust it: `scripts/sim_scale.py validate`.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ptrain.errors import ConfigError


@dataclass(frozen=True)
class Turn:
    prefill_tokens: int  # prompt tokens the engine runs for this turn (what its prefix cache does not hold)
    decode_tokens: int  # tokens the model samples
    tool_s: float = 0.0  # the turn's tool calls, one after another
    context_tokens: int = 0  # the sequence's length when this turn starts sampling (the KV width it adds)


@dataclass(frozen=True)
class EpisodeShape:
    turns: tuple[Turn, ...]
    setup_s: float = 0.0  # from sandbox in hand to the first model turn: the taskpack's setup
    artifact_s: float = 0.0
    verify_s: float = 0.0  # the verifier in its fresh sandbox; 0: not verified


@dataclass(frozen=True)
class EngineCost:
    """What an engine replica's iteration costs, in seconds; see the module docstring."""

    name: str
    decode_a_s: float
    decode_b_s: float
    prefill_s_per_token: float
    prefill_a_s: float = 0.0  # per prefill forward pass (an iteration that admits requests)
    decode_kv_s: float = 0.0  # per KV token of the batch (rows x width), per decode step
    copy_s_per_kv_token: float = 0.0  # per KV token of the batch, each time rows join or leave it
    max_batch: int = 64
    decode_curve: tuple[tuple[int, float], ...] = ()  # measured (rows, step_s at width 0), instead of a + b * rows

    def step_s(self, rows: int, width: int = 0) -> float:
        if self.decode_curve:
            x, y = zip(*self.decode_curve, strict=True)
            slope = (y[-1] - y[0]) / (x[-1] - x[0]) if len(x) > 1 else 0.0
            base = float(np.interp(rows, x, y)) + slope * max(0, rows - x[-1])  # linear past the last point
        else:
            base = self.decode_a_s + self.decode_b_s * rows
        return base + self.decode_kv_s * rows * width

    def peak_tokens_per_s(self, width: int = 0) -> float:
        """Decode tokens a second with a full batch: what utilisation is measured against."""
        return self.max_batch / self.step_s(self.max_batch, width) if self.step_s(self.max_batch, width) else math.inf

    def scaled(self, factor: float) -> EngineCost:
        """The same engine `factor` times slower (a busier or a slower machine)."""
        times = ("decode_a_s", "decode_b_s", "prefill_s_per_token", "prefill_a_s", "decode_kv_s", "copy_s_per_kv_token")
        return replace(self, **{name: getattr(self, name) * factor for name in times},
                       decode_curve=tuple((rows, t * factor) for rows, t in self.decode_curve))  # fmt: skip


# This machine's hf engine with SmolLM2-135M on one core, fitted by `scripts/sim_scale.py measure --engine-bench`
# (CPU seconds of the engine's own operations: decode steps at batch 1-8 and two widths, prefill, cache copies).
CPU_HERE = EngineCost("cpu-here", decode_a_s=0.0756, decode_b_s=0.0132, prefill_s_per_token=0.0074, prefill_a_s=0.089,
                      decode_kv_s=1.87e-05, copy_s_per_kv_token=2.14e-05,
                      decode_curve=((1, 0.0752), (2, 0.1085), (4, 0.1428), (8, 0.1745)))  # fmt: skip
# An assumption, not a measurement: one H200 serving a 7-8B dense model in bf16 through vLLM (paged KV, so no
# copies). A decode step reads the weights once (15 GB at 4.8 TB/s: 3 ms) plus scheduling and kernel launches:
# about 8 ms at batch 1; each row adds its KV reads and FLOPs, about 0.06 ms at these contexts (256 rows: 23 ms,
# 11,000 tokens/s). Prefill is compute-bound: 14 GFLOP a token at about 450 TFLOP/s sustained, 0.03 ms a token.
# 256 rows is vLLM's default max_num_seqs. Measure your own and pass them to scripts/sim_scale.py.
H200_7B = EngineCost("h200-7b-vllm", decode_a_s=0.008, decode_b_s=6e-05, prefill_s_per_token=3e-05, max_batch=256)
INSTANT = EngineCost("instant", decode_a_s=0.0, decode_b_s=0.0, prefill_s_per_token=0.0, max_batch=1 << 30)  # gold
ENGINES = {e.name: e for e in (CPU_HERE, H200_7B, INSTANT)}
MODES = ("async", "lockstep")


@dataclass(frozen=True)
class SimConfig:
    concurrency: int = 8  # episode workers, each holding a sandbox
    mode: str = "async"
    verify_concurrency: int = 2
    engine: EngineCost = CPU_HERE
    starts_per_s: float = math.inf  # container starts a second (the pool's refills); inf: no limit
    start_s: float = 0.0  # one start's latency at best (cold create + start + first exec)
    pool_size: int | None = None  # warm sandboxes at the start; None: concurrency + verify_concurrency
    cpu_cores: float = 0.0  # cores the engine shares with tools and verifiers (0: its own, as on an accelerator)
    engine_threads: int = 1  # the engine's threads on those cores

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"simulation mode {self.mode!r} is not one of {MODES}")
        if self.concurrency < 1 or self.verify_concurrency < 1 or self.starts_per_s <= 0:
            raise ConfigError("concurrency, verify_concurrency and starts_per_s must be positive")


class Level:
    """A count that changes over time (sandboxes held, episodes in tools), integrated over a window."""

    def __init__(self) -> None:
        self.value, self.times, self.values = 0, [0.0], [0]

    def add(self, now: float, delta: int) -> None:
        self.value += delta
        if self.times[-1] == now:
            self.values[-1] = self.value
        else:
            self.times.append(now)
            self.values.append(self.value)

    def over(self, t0: float, t1: float) -> tuple[float, int, float]:
        """(time-weighted mean, peak, seconds above zero) over [t0, t1]."""
        times, values = np.array(self.times), np.array(self.values)
        edges = np.clip(np.append(times, max(t1, times[-1])), t0, t1)
        spans = np.diff(edges)
        inside = spans > 0
        peak = int(values[inside].max()) if inside.any() else int(values[np.searchsorted(times, t0, "right") - 1])
        length = max(t1 - t0, 1e-12)
        return float((spans * values).sum() / length), peak, float(spans[values > 0].sum())


@dataclass
class SimResult:
    episodes: int
    wall_s: float
    tokens: int
    stored_at: np.ndarray  # when each episode was stored, sorted
    verified_at: np.ndarray
    busy: np.ndarray  # (iterations, 2): each engine iteration's start and end
    iteration_tokens: np.ndarray  # tokens each iteration sampled
    levels: dict[str, Level]  # held (sandboxes in use), generate, tools, verify, rows (the engine's batch)
    starts_at: np.ndarray  # when each container start finished
    start_interval_s: float  # 1 / starts_per_s
    verify_concurrency: int
    mode: str

    @property
    def episodes_per_min(self) -> float:
        """As the rollout's summary counts it: episodes over the whole run, verification included."""
        return 60 * self.episodes / max(self.wall_s, 1e-12)

    def window(self, t0: float = 0.0, t1: float | None = None) -> dict[str, float]:
        """Rates and loads over (t0, t1] (the whole run by default)."""
        t1 = self.wall_s if t1 is None else t1
        length = max(t1 - t0, 1e-12)
        busy = np.clip(self.busy, t0, t1)
        busy_s = float((busy[:, 1] - busy[:, 0]).sum()) if len(busy) else 0.0
        held, held_peak, _ = self.levels["held"].over(t0, t1)
        tools, _, _ = self.levels["tools"].over(t0, t1)
        verifying, _, _ = self.levels["verify"].over(t0, t1)
        rows, _, _ = self.levels["rows"].over(t0, t1)
        _, _, demand_s = self.levels["generate"].over(t0, t1)

        def per_hour(times: np.ndarray) -> float:
            return 3600 * float(((times > t0) & (times <= t1)).sum()) / length

        starts = per_hour(self.starts_at) / 3600
        ends = self.busy[:, 1] if len(self.busy) else np.zeros(0)
        tokens = float(self.iteration_tokens[(ends > t0) & (ends <= t1)].sum())
        return {
            "episodes_per_hour": per_hour(self.stored_at),
            "verified_per_hour": per_hour(self.verified_at),
            "engine_utilisation": busy_s / length,
            "engine_busy_fraction": busy_s / demand_s if demand_s else 0.0,
            "engine_rows_mean": rows,
            "engine_tokens_per_s": tokens / length,
            "sandboxes_held_mean": held,
            "sandboxes_held_peak": held_peak,
            "sandboxes_in_tools_mean": tools,
            "sandboxes_verifying_mean": verifying,
            "starts_per_s": starts,
            "start_utilisation": min(1.0, starts * self.start_interval_s),
            "verify_utilisation": verifying / self.verify_concurrency,
        }

    def steady(self, skip: int | None = None) -> dict[str, float]:
        """`window` without the first and last `skip` stored episodes (a quarter): no ramp-up, no drain.

        For lock-step, `skip` a whole number of waves, so that the window holds whole waves.
        """
        n = len(self.stored_at)
        skip = n // 4 if skip is None else skip
        return self.window(float(self.stored_at[max(skip, 1) - 1]), float(self.stored_at[n - 1 - skip]))


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


# --- the fleet ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hosts:
    """The tool hosts: defaults measured on this 2-core machine (bench_sandbox: 64 sandboxes started in 6.0 s)."""

    sandboxes_per_host: int = 64
    starts_per_s_per_host: float = 10.7
    start_s: float = 0.142  # cold create + start + first exec, p50


@dataclass(frozen=True)
class FleetPoint:
    accelerators: int
    sandboxes: int  # episodes in flight, each in its sandbox; verification takes more (sandboxes_verifying_mean)
    mode: str
    replicas_used: int
    sandboxes_per_replica: int
    episodes_per_hour: float  # verified: what training can use
    engine_utilisation: float  # sampled tokens/s over all accelerators' decode peak (max_batch rows), idle ones too
    engine_busy: float  # the time an engine is busy, whatever its batch
    engine_rows_mean: float  # the batch a busy replica runs
    sandboxes_held_mean: float  # episodes' and verifiers'
    sandboxes_held_peak: float  # replicas x one replica's peak: an upper bound
    sandboxes_in_tools_mean: float
    sandboxes_verifying_mean: float
    starts_per_s: float
    start_utilisation: float
    bottleneck: str


def bottleneck(load: dict[str, float], max_batch: int, saturated: float = 0.85) -> str:
    """What limits throughput: container starts, the engine (busy with a full batch), or else too few sandboxes."""
    if load["start_utilisation"] >= saturated:
        return "container starts"
    if (
        load["engine_utilisation"] >= saturated
        and load["engine_rows_mean"] >= saturated * max_batch * load["engine_utilisation"]
    ):
        return "engine"
    return "sandboxes"


def simulate_fleet(
    workload: Sequence[EpisodeShape],
    accelerators: int,
    sandboxes: int,
    engine: EngineCost,
    mode: str = "async",
    hosts: Hosts = Hosts(),
    seed: int = 0,
    min_episodes: int = 600,
) -> FleetPoint:
    """One replica with its share of sandboxes and start rate, simulated in steady state, times the replicas used.

    `sandboxes` run episodes (the scheduler's concurrency); each stored episode is verified at once in
    a sandbox of its own, as many at a time as it takes, so verification is never the queue (it shows
    as sandboxes held, and as container starts). The pool starts empty, so no warm stock flatters the
    steady window, which leaves out the first and last quarter of the episodes (whole waves in lock-step).
    """
    used = min(accelerators, sandboxes)
    share = max(1, round(sandboxes / used))
    starts = hosts.starts_per_s_per_host * sandboxes / hosts.sandboxes_per_host / used
    waves = max(4, math.ceil(min_episodes / share))
    rng = np.random.default_rng(seed)
    shapes = [workload[i] for i in rng.integers(len(workload), size=share * waves)]
    config = SimConfig(concurrency=share, mode=mode, verify_concurrency=1 << 30, engine=engine, starts_per_s=starts,
                       start_s=hosts.start_s, pool_size=0)  # fmt: skip
    s = simulate(shapes, config).steady(share * (waves // 4))
    verified = any(shape.verify_s > 0 for shape in workload)
    return FleetPoint(
        accelerators=accelerators,
        sandboxes=sandboxes,
        mode=mode,
        replicas_used=used,
        sandboxes_per_replica=share,
        episodes_per_hour=used
        * (min(s["verified_per_hour"], s["episodes_per_hour"]) if verified else s["episodes_per_hour"]),
        engine_utilisation=s["engine_tokens_per_s"] / engine.peak_tokens_per_s() * used / accelerators,
        engine_busy=s["engine_utilisation"] * used / accelerators,
        engine_rows_mean=s["engine_rows_mean"] / max(s["engine_utilisation"], 1e-9),
        sandboxes_held_mean=used * s["sandboxes_held_mean"],
        sandboxes_held_peak=used * s["sandboxes_held_peak"],
        sandboxes_in_tools_mean=used * s["sandboxes_in_tools_mean"],
        sandboxes_verifying_mean=used * s["sandboxes_verifying_mean"],
        starts_per_s=used * s["starts_per_s"],
        start_utilisation=s["start_utilisation"],
        bottleneck=bottleneck(s, engine.max_batch),
    )
