"""The fleet: N engine replicas and S sandboxes, for one point of a scale sweep (scripts/sim_scale.py sweep).

Scale (`simulate_fleet`): N engine replicas and S sandboxes. An episode stays on one replica, and
replicas share nothing but the tool hosts, whose start capacity is divided evenly; so the fleet is N
copies of one replica with S/N sandboxes and 1/N of the start rate: one replica is simulated and its
rates multiplied. That is exact for async. For lock-step it puts the barrier inside a replica, which
is kind to lock-step (a fleet-wide barrier waits for the slowest of more episodes), so the async
advantage it shows is a lower bound. How far to trust it: `scripts/sim_scale.py validate`.

The replica itself is simulated by ptrain/sim.py; this file divides the sandboxes and the start rate,
reads the steady window and names what limits throughput.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ptrain.sim import simulate
from ptrain.sim_types import EngineCost, EpisodeShape, SimConfig


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
