"""The simulator's data: what goes into a simulation and what comes out of it.

In: `Turn` and `EpisodeShape` (an episode as measured: its turns' tokens and tool time, its setup,
artifact and verifier), `EngineCost` (what one engine replica's iteration costs, with three ready-made
engines: this machine's, an assumed H200 and an instant one) and `SimConfig` (one replica's workers,
verifiers and warm pool). Out: `SimResult`, a run's event times and `Level`s, read as rates and loads
over a window. They live apart from the event loop (ptrain/sim.py) so that it reads alone, and so that
the fleet (ptrain/sim_fleet.py) and scripts/sim_scale.py can build inputs without it.
"""

from __future__ import annotations

import math
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
    """What an engine replica's iteration costs, in seconds; see ptrain/sim.py's docstring."""

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
