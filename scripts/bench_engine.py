#!/usr/bin/env python
"""Engine benchmark: the hf engine's continuous batching against static-batch `model.generate`, one run.

The same requests (random prompts of --prompt-min..--prompt-max tokens, sampled at temperature 1) go
through two paths at the same batch size K:

    static      `model.generate` on batches of K requests, left-padded; a batch runs until its longest
                request is done (the others' extra tokens are thrown away)
    continuous  the HFEngine with K requests in flight: a new one is submitted as soon as one finishes

Two workloads: `equal` (every request generates --max-new tokens: static batching's best case, so
the continuous engine's bookkeeping is all the difference) and `mixed` (--min-new..--max-new tokens,
uniform: rows finish at different steps, as an agent's turns do). Throughput counts the requested tokens
only, prefill included on both sides. The prefix cache is off (the prompts share nothing).

Run: .venv/bin/python scripts/bench_engine.py [--requests 32] [--batch 8] [--threads 1] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import time
from pathlib import Path


def workload(args, mixed: bool) -> list[tuple[list[int], int]]:
    rng = random.Random(0)
    return [
        (
            [rng.randrange(100, 20_000) for _ in range(rng.randrange(args.prompt_min, args.prompt_max + 1))],
            rng.randrange(args.min_new, args.max_new + 1) if mixed else args.max_new,
        )
        for _ in range(args.requests)
    ]


def static(model, requests, batch: int) -> float:
    """Seconds for `model.generate` over the requests in batches of `batch`, each batch to its longest."""
    import torch

    start = time.perf_counter()
    for first in range(0, len(requests), batch):
        chunk = requests[first : first + batch]
        width = max(len(ids) for ids, _ in chunk)
        longest = max(n for _, n in chunk)
        ids = torch.tensor([[0] * (width - len(p)) + p for p, _ in chunk])
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p, _ in chunk])
        with torch.inference_mode():
            model.generate(ids, attention_mask=mask, max_new_tokens=longest, min_new_tokens=longest,
                           do_sample=True, pad_token_id=0)  # fmt: skip
    return time.perf_counter() - start


async def continuous(model, requests, batch: int) -> tuple[float, dict]:
    from ptrain.engine.base import Sampling
    from ptrain.engine.hf import HFEngine

    engine = HFEngine(model, seed=0, prefix_cache=False, max_batch=batch)
    queue = list(reversed(requests))

    async def client() -> None:
        while queue:
            ids, n = queue.pop()
            await engine.generate(ids, Sampling(max_new_tokens=n, temperature=1.0))  # no stop token: all n

    start = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(batch)))
    seconds = time.perf_counter() - start
    stats = engine.stats()
    await engine.close()
    steps = stats.extra["decode_steps"]
    return seconds, {"decode_steps": steps, "mean_decode_batch": (stats.generated_tokens - len(requests)) / steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=32)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--prompt-min", type=int, default=100)
    parser.add_argument("--prompt-max", type=int, default=300)
    parser.add_argument("--min-new", type=int, default=16)
    parser.add_argument("--max-new", type=int, default=96)
    parser.add_argument("--threads", type=int, default=1, help="torch threads; 1 also pins the process to core 0")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForCausalLM

    from ptrain.engine.models import resolve_model

    torch.set_num_threads(args.threads)
    if args.threads == 1:
        os.sched_setaffinity(0, {0})
    model = AutoModelForCausalLM.from_pretrained(resolve_model("smollm2-135m")).eval()
    static(model, workload(args, False)[:2], 2)  # warm up
    results = []
    for name in ("equal", "mixed"):
        requests = workload(args, name == "mixed")
        tokens = sum(n for _, n in requests)
        static_s = static(model, requests, args.batch)
        continuous_s, engine = asyncio.run(continuous(model, requests, args.batch))
        results.append({"workload": name, "requests": len(requests), "batch": args.batch, "tokens": tokens,
                        "static_tokens_per_s": tokens / static_s, "continuous_tokens_per_s": tokens / continuous_s,
                        "continuous_over_static": static_s / continuous_s, **engine})  # fmt: skip
    print(f"{args.requests} requests, prompts {args.prompt_min}-{args.prompt_max} tokens, batch {args.batch}, "
          f"{args.threads} thread(s)")  # fmt: skip
    print(
        f"{'workload':10} {'tokens':>7} {'static tok/s':>13} {'continuous tok/s':>17} {'ratio':>6} {'mean batch':>11}"
    )
    for r in results:
        print(f"{r['workload']:10} {r['tokens']:7d} {r['static_tokens_per_s']:13.1f} "
              f"{r['continuous_tokens_per_s']:17.1f} {r['continuous_over_static']:5.2f}x {r['mean_decode_batch']:11.1f}")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
