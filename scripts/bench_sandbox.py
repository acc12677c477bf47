#!/usr/bin/env python
"""Sandbox benchmark: exec agent vs `podman exec`, warm pool vs cold start, 64 sandboxes at once.

Every figure is measured in this one run, on this machine, so the ratios compare like with like.
Run: .venv/bin/python scripts/bench_sandbox.py [--n 300] [--at-once 64] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from ptrain.sandbox import Sandbox, SandboxPool, images, runtime
from ptrain.sandbox.container import in_thread


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000  # ms


async def timed(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        await fn()
        out.append(time.perf_counter() - t)
    return out


async def main(n: int, at_once: int) -> dict:
    url = runtime.ensure_service()
    image = images.build_base(url)
    results = {}

    box = await Sandbox.create(image, url)
    await timed(lambda: box.exec("true"), 20)  # warm up both paths
    agent = await timed(lambda: box.exec("true"), n)
    podman_exec = await timed(lambda: in_thread(box.container.exec_run, ["true"]), max(20, n // 5))
    await box.close()
    results["exec_agent_ms"] = {"p50": pct(agent, 0.5), "p95": pct(agent, 0.95)}
    results["podman_exec_ms"] = {"p50": pct(podman_exec, 0.5), "p95": pct(podman_exec, 0.95)}
    results["exec_speedup_p50"] = pct(podman_exec, 0.5) / pct(agent, 0.5)

    cold = []
    for _ in range(max(10, n // 15)):
        t = time.perf_counter()
        fresh = await Sandbox.create(image, url)
        await fresh.exec("true")
        cold.append(time.perf_counter() - t)
        await fresh.close()
    results["cold_create_start_ms"] = {"p50": pct(cold, 0.5), "p95": pct(cold, 0.95)}

    warm = []
    async with SandboxPool(image, size=4, urls=[url]) as pool:
        for _ in range(max(10, n // 15)):
            while pool.idle.qsize() < pool.size:  # measure a warm pool, not the refill
                await asyncio.sleep(0.05)
            t = time.perf_counter()
            got = await pool.acquire()
            warm.append(time.perf_counter() - t)
            await pool.release(got)
    results["warm_acquire_ms"] = {"p50": pct(warm, 0.5), "p95": pct(warm, 0.95)}
    results["warm_vs_cold_p50"] = pct(cold, 0.5) / pct(warm, 0.5)

    t = time.perf_counter()
    boxes = await asyncio.gather(*(Sandbox.create(image, url) for _ in range(at_once)), return_exceptions=True)
    started = [b for b in boxes if isinstance(b, Sandbox)]
    start_wall = time.perf_counter() - t
    t = time.perf_counter()
    runs = await asyncio.gather(*(b.exec("sleep 1", timeout_s=60) for b in started), return_exceptions=True)
    run_wall = time.perf_counter() - t
    failures = (at_once - len(started)) + sum(1 for r in runs if isinstance(r, BaseException) or not r.ok)
    await asyncio.gather(*(b.close() for b in started))
    results["at_once"] = {
        "sandboxes": at_once,
        "start_wall_s": start_wall,
        "sleep1_wall_s": run_wall,
        "failures": failures,
    }
    return results


def report(r: dict) -> None:
    print(f"{'measure':34} {'p50 ms':>9} {'p95 ms':>9}")
    for key, label in [
        ("exec_agent_ms", "`true` through the exec agent"),
        ("podman_exec_ms", "`true` through podman exec"),
        ("cold_create_start_ms", "cold create+start (+ first exec)"),
        ("warm_acquire_ms", "acquire from the warm pool"),
    ]:
        print(f"{label:34} {r[key]['p50']:9.2f} {r[key]['p95']:9.2f}")
    print(f"exec agent vs podman exec (p50): {r['exec_speedup_p50']:.1f}x faster")
    print(f"warm acquire vs cold start (p50): {r['warm_vs_cold_p50']:.0f}x faster")
    a = r["at_once"]
    print(
        f"{a['sandboxes']} sandboxes at once: started in {a['start_wall_s']:.1f} s; "
        f"`sleep 1` in all of them took {a['sleep1_wall_s']:.2f} s wall; failures: {a['failures']}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="exec samples per path")
    parser.add_argument("--at-once", type=int, default=64)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    figures = asyncio.run(main(args.n, args.at_once))
    report(figures)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)
