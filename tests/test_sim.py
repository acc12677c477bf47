"""The scheduler simulation (ptrain/sim.py): small cases whose answers are known by hand."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ptrain.errors import ConfigError
from ptrain.sim import simulate
from ptrain.sim_fleet import Hosts, simulate_fleet
from ptrain.sim_types import H200_7B, INSTANT, EngineCost, EpisodeShape, SimConfig, Turn

SIMPLE = EngineCost("simple", decode_a_s=0.1, decode_b_s=0.0, prefill_s_per_token=0.01)


def shape(tools: tuple[float, ...], decode: int = 3, prefill: int = 10, **kw) -> EpisodeShape:
    return EpisodeShape(tuple(Turn(prefill, decode, t, 100) for t in tools), **kw)


def test_one_episode_takes_exactly_its_setup_turns_tools_and_artifact():
    # a turn: one iteration prefills 10 tokens (0.1 s, the first token) and decodes the second (0.1 s), the next
    # decodes the third (0.1 s): 0.3 s; then 2 s of tools. 1 + 2 x 2.3 + 0.5 = 6.1 s, and the verifier 1 s more.
    episode = shape((2.0, 2.0), setup_s=1.0, artifact_s=0.5)
    result = simulate([episode], SimConfig(concurrency=1, engine=SIMPLE))
    assert result.wall_s == pytest.approx(6.1)
    assert result.episodes_per_min == pytest.approx(60 / 6.1)
    assert result.tokens == 6
    assert result.window()["engine_utilisation"] == pytest.approx(0.6 / 6.1)
    verified = simulate([dataclasses.replace(episode, verify_s=1.0)], SimConfig(concurrency=1, engine=SIMPLE))
    assert verified.wall_s == pytest.approx(7.1)
    assert verified.verified_at.tolist() == pytest.approx([7.1])


def test_identical_episodes_started_together_take_as_long_in_lockstep_as_in_async():
    episodes = [shape((1.0, 0.5, 2.0), setup_s=0.2)] * 6
    runs = {
        mode: simulate(episodes, SimConfig(concurrency=6, mode=mode, engine=SIMPLE)) for mode in ("async", "lockstep")
    }
    assert runs["async"].wall_s == pytest.approx(runs["lockstep"].wall_s)
    assert np.allclose(runs["async"].busy, runs["lockstep"].busy)


def test_lockstep_waits_for_the_slowest_tool_of_every_turn_and_async_does_not():
    # A runs tools of 1 s then 3 s, B 3 s then 1 s: async takes 4 s each, lock-step 3 + 3 s
    episodes = [shape((1.0, 3.0)), shape((3.0, 1.0))]
    walls = {mode: simulate(episodes, SimConfig(concurrency=2, mode=mode, engine=INSTANT)).wall_s
             for mode in ("async", "lockstep")}  # fmt: skip
    assert walls == pytest.approx({"async": 4.0, "lockstep": 6.0})


def test_lockstep_runs_in_waves_and_a_finished_episode_leaves_its_barrier():
    # waves of 2: (1 turn of 1 s, 3 turns of 1 s) then the same again; the short one must not hold up the long one
    episodes = [shape((1.0,)), shape((1.0, 1.0, 1.0))] * 2
    result = simulate(episodes, SimConfig(concurrency=2, mode="lockstep", engine=INSTANT))
    assert result.wall_s == pytest.approx(6.0)
    assert result.stored_at.tolist() == pytest.approx([1.0, 3.0, 4.0, 6.0])


def test_a_decode_step_costs_a_plus_b_per_row_unless_a_curve_was_measured():
    engine = EngineCost("e", decode_a_s=0.05, decode_b_s=0.01, prefill_s_per_token=0.0, decode_kv_s=1e-5)
    assert engine.step_s(8) == pytest.approx(0.13)
    assert engine.step_s(8, width=100) == pytest.approx(0.13 + 8e-3)
    curved = dataclasses.replace(engine, decode_curve=((1, 0.1), (2, 0.2), (4, 0.3)))
    assert curved.step_s(3) == pytest.approx(0.25)
    assert curved.step_s(6) == pytest.approx(0.3 + 2 * (0.2 / 3))  # the curve's overall slope past its end
    assert engine.scaled(2).step_s(8) == pytest.approx(0.26)
    assert H200_7B.peak_tokens_per_s() == pytest.approx(256 / (0.008 + 256 * 6e-5))


def test_rows_joining_a_running_batch_pay_for_copying_its_cache():
    copying = dataclasses.replace(SIMPLE, copy_s_per_kv_token=1e-3)
    early, late = shape((0.0,), decode=20), EpisodeShape((Turn(10, 3, 0.0, 100),), setup_s=0.5)
    plain = simulate([early, late], SimConfig(concurrency=2, engine=SIMPLE))
    copied = simulate([early, late], SimConfig(concurrency=2, engine=copying))
    assert copied.window()["engine_utilisation"] * copied.wall_s > plain.window()["engine_utilisation"] * plain.wall_s
    alone = [shape((0.0,))]  # nothing to copy into: no cost
    assert simulate(alone, SimConfig(concurrency=1, engine=copying)).wall_s == pytest.approx(0.3)


def test_engine_utilisation_and_busy_fraction_stay_within_bounds():
    rng = np.random.default_rng(1)
    episodes = [shape(tuple(rng.uniform(0, 2, rng.integers(1, 5))), decode=int(rng.integers(1, 40)), setup_s=0.1,
                      verify_s=0.3) for _ in range(60)]  # fmt: skip
    for mode in ("async", "lockstep"):
        result = simulate(episodes, SimConfig(concurrency=8, mode=mode, engine=SIMPLE))
        for window in (result.window(), result.steady()):
            assert 0.0 <= window["engine_utilisation"] <= 1.0 + 1e-9
            assert 0.0 <= window["engine_busy_fraction"] <= 1.0 + 1e-9
            assert 0.0 <= window["sandboxes_held_mean"] <= window["sandboxes_held_peak"] <= 8 + 2


def test_more_sandboxes_never_lower_throughput():
    episodes = [shape((1.0, 0.5, 0.2), decode=20, setup_s=0.3)] * 400
    rates = [simulate(episodes, SimConfig(concurrency=c, engine=SIMPLE)).steady()["episodes_per_hour"]
             for c in (1, 2, 4, 8, 16, 32)]  # fmt: skip
    assert all(b >= a * 0.999 for a, b in zip(rates, rates[1:], strict=False)), rates


def test_a_fleet_point_is_the_same_for_the_same_seed():
    workload = [shape((0.1,) * k, decode=d, setup_s=0.2, verify_s=1.0) for k in (1, 2, 3) for d in (10, 30)]
    points = [simulate_fleet(workload, 8, 1000, H200_7B, "async", seed=3) for _ in range(2)]
    assert points[0] == points[1]
    assert points[0].sandboxes_per_replica == 125 and points[0].replicas_used == 8


def test_the_fleet_names_its_bottleneck():
    workload = [shape((0.05, 0.05), decode=30, setup_s=0.2, verify_s=1.0)]
    unlimited = Hosts(starts_per_s_per_host=float("inf"))
    starved = simulate_fleet(workload, 8, 1000, H200_7B, hosts=Hosts(starts_per_s_per_host=1.0))
    assert starved.bottleneck == "container starts"
    assert starved.starts_per_s == pytest.approx(1000 / 64, rel=0.05)  # every start the hosts can make
    assert simulate_fleet(workload, 8, 20_000, H200_7B, hosts=unlimited).bottleneck == "engine"
    few = simulate_fleet(workload, 8, 64, H200_7B, hosts=unlimited)
    assert few.bottleneck == "sandboxes" and few.engine_utilisation < 0.1


def test_an_unknown_mode_is_a_config_error():
    with pytest.raises(ConfigError, match="not one of"):
        SimConfig(mode="sync")
