#!/usr/bin/env python
"""Scale-out benchmark: one Ray worker against two (one per core), and what Ray adds per episode, in one run.

A Ray cluster of two nodes (one CPU each) is started on this machine for the run and stopped after
it. The same terminal-coding tasks are rolled out three times, each into a fresh run directory, with
the real SmolLM2-135M in the `hf` engine (one torch thread per engine) and real podman sandboxes:

    local     `ptrain rollout` in this process, no Ray: the baseline for Ray's overhead
    ray x1    one Ray worker with the same concurrency
    ray x2    two Ray workers, one per node (core), each with that concurrency

Every figure starts when the engines are loaded (a worker's start-up is reported apart). Ray's
overhead per episode is (ray x1 wall - local wall) / episodes, and the round trip of an empty actor
call is measured too.

Run: .venv/bin/python scripts/bench_scale.py [--tasks 8] [--samples 2] [--concurrency 4] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from ptrain.cli.rollout import run_rollout
from ptrain.rollout.config import RolloutConfig
from ptrain.testing import ray_cluster


def actor_round_trip_ms(calls: int = 200) -> float:
    """p50 of an empty call on a Ray actor: the floor of what handing out one group costs."""
    import ray

    @ray.remote(num_cpus=0)
    class Echo:
        def ping(self) -> int:
            return 0

    echo = Echo.remote()
    ray.get(echo.ping.remote())
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        ray.get(echo.ping.remote())
        times.append(time.perf_counter() - t0)
    ray.kill(echo)
    return 1000 * statistics.median(times)


def one(name: str, cfg: RolloutConfig, root: Path) -> dict:
    started = time.monotonic()
    report = asyncio.run(run_rollout(root / name, cfg, live=False))
    summary = report.as_dict()
    summary["total_s"] = time.monotonic() - started  # with engine loading / worker start-up
    summary["startup_s"] = summary["total_s"] - summary["wall_s"]
    print(f"{name:8} {summary['finished']:3} episodes in {summary['wall_s']:6.1f} s "
          f"(+{summary['startup_s']:.0f} s start-up): {summary['episodes_per_min']:5.1f} episodes/min, "
          f"engine busy {100 * (summary['engine_busy_fraction'] or 0):3.0f}% of demand", flush=True)  # fmt: skip
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--max-turns", type=int, default=2)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    cfg = RolloutConfig(taskpack="terminal-coding", categories=("shell-basics",), difficulties=("easy",),
                        tasks=args.tasks, samples=args.samples, concurrency=args.concurrency,
                        max_turns=args.max_turns, max_new_tokens=args.max_new_tokens, engine_threads=1,
                        flush_interval_s=1.0)  # fmt: skip
    root = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    ray_cluster.stop()  # a cluster left by an earlier run
    address = ray_cluster.start(root / "ray", nodes=2, object_store_mb=300)
    try:
        results = {"config": {k: v for k, v in vars(args).items() if k != "json"}}
        results["local"] = one("local", cfg, root)
        results["ray_x1"] = one("ray x1", dataclasses.replace(cfg, ray=address, workers=1), root)
        results["ray_x2"] = one("ray x2", dataclasses.replace(cfg, ray=address, workers=2), root)
        results["actor_call_ms"] = actor_round_trip_ms()
    finally:
        ray_cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
    local, one_w, two_w = results["local"], results["ray_x1"], results["ray_x2"]
    results["ray_overhead_s_per_episode"] = (one_w["wall_s"] - local["wall_s"]) / max(one_w["finished"], 1)
    results["two_over_one"] = two_w["episodes_per_min"] / one_w["episodes_per_min"]
    print(f"\n2 workers / 1 worker: {results['two_over_one']:.2f}x episodes/min; Ray adds "
          f"{results['ray_overhead_s_per_episode']:+.2f} s per episode over a local run; an empty actor call "
          f"takes {results['actor_call_ms']:.2f} ms")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
