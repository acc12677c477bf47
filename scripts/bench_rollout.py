#!/usr/bin/env python
"""Rollout benchmark: async scheduling vs lock-step, against the engine's own peak, in one run.

Real podman sandboxes, the real SmolLM2-135M in the in-process `hf` engine, terminal-coding bug-fix
tasks (a Python project with its test suite). Each model turn is the model's own sampled tokens
(up to --new-tokens, stopping where the model stops), followed by the command an agent runs on such
a task: the test suite, a grep, a compile check. The untrained 135M model seldom writes a command
that runs at all, so without this the tools would take no time and there would be nothing to
overlap; the commands are the tasks' real work in real containers, and every generated token is the
real model's.

    peak      static-batch `model.generate` of the same prompts at the same batch size, decode
              only (every row generates --new-tokens; the prefill is measured apart and left out)
    async     the scheduler: `concurrency` episodes in flight, each alternating model and tools
    lockstep  the synchronous baseline: every episode generates, then every episode runs its tools

Reported for two placements: `pinned` (the engine on core 0 with one thread, the containers on core
1, as on a real deployment where the accelerator and the tool CPUs are separate) and `shared` (both
use both cores). Each placement runs in its own process so thread and affinity settings stay clean.

Run: .venv/bin/python scripts/bench_rollout.py [--tasks 8] [--samples 2] [--turns 4] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

COMMANDS = (  # each runs the project's test suite a few times (checking for flaky failures), as agents do
    "cd /workspace/{p} && for i in 1 2 3; do python3 -m pytest -q -x 2>&1 | tail -1; done",
    "cd /workspace/{p} && grep -rln 'def ' --include=*.py {p} | head -3 && for i in 1 2 3; do python3 -m pytest -q 2>&1 | tail -1; done",
    "cd /workspace/{p} && git diff --stat && python3 -m compileall -q {p} && for i in 1 2 3; do python3 -m pytest -q 2>&1 | tail -1; done",
)


@dataclass
class ThoughtThenCommand:
    """An engine whose turns are the real model's tokens followed by the workload's next command."""

    engine: object
    fmt: object
    new_tokens: int

    def __getattr__(self, name):
        return getattr(self.engine, name)

    async def generate(self, token_ids, sampling):
        from ptrain.engine.base import Completion

        prompt = self.fmt.render_text(token_ids)
        turn = prompt.count("<|im_start|>assistant") - 1
        project = re.search(r"/workspace/(\w+)", prompt).group(1)
        command = COMMANDS[turn % len(COMMANDS)].format(p=project)
        action = self.fmt.encode(f"\n```bash\n{command}\n```") + [self.fmt.end_id]
        budget = min(self.new_tokens, sampling.max_new_tokens - len(action))
        real = await self.engine.generate(token_ids, replace(sampling, max_new_tokens=budget))
        thought = [t for t in real.token_ids if t != self.fmt.end_id]
        ids = tuple(thought) + tuple(action)
        return Completion(ids, real.logprobs[: len(thought)] + (0.0,) * len(action), "stop", real.policy_version,
                          real.prompt_tokens, real.queued_s, real.generate_s)  # fmt: skip


def peak_tokens_per_s(model, prompts: list[list[int]], new_tokens: int, pad_id: int) -> float:
    """Static-batch decode: `model.generate` of every row for exactly `new_tokens`, less the same call
    for one token (the prompts' prefill), so the figure is the engine's decode rate at this batch size."""
    import torch

    width = max(map(len, prompts))
    ids = torch.tensor([[pad_id] * (width - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])

    def timed(n: int) -> float:
        t0 = time.perf_counter()
        model.generate(ids, attention_mask=mask, max_new_tokens=n, min_new_tokens=n, do_sample=True,
                       pad_token_id=pad_id)  # fmt: skip
        return time.perf_counter() - t0

    with torch.inference_mode():
        timed(1)  # warm up
        return len(prompts) * (new_tokens - 1) / (timed(new_tokens) - timed(1))


async def one_placement(args) -> dict:
    import torch
    from transformers import AutoTokenizer

    from ptrain.engine.hf import HFEngine
    from ptrain.engine.models import resolve_model
    from ptrain.rollout.chat import DEFAULT_SYSTEM, ChatFormat
    from ptrain.rollout.config import RolloutConfig
    from ptrain.rollout.scheduler import Rollout
    from ptrain.sandbox import PoolSet, runtime
    from ptrain.sandbox.container import SandboxLimits
    from ptrain.store import Store
    from ptrain.taskpack import load

    pinned = args.placement == "pinned"
    if pinned:
        os.sched_setaffinity(0, {0})
        torch.set_num_threads(1)
    runtime.ensure_service()
    path = resolve_model("smollm2-135m")
    fmt = ChatFormat(AutoTokenizer.from_pretrained(path), "bash")
    pack = load("terminal-coding")
    tasks = [t for t in pack.tasks("train") if t.id.startswith("mutants/")][::97][: args.tasks]
    engine = HFEngine.load(path)
    prompts = [fmt.prompt_ids(DEFAULT_SYSTEM, t.instruction, pack.tools()) for t in tasks for _ in range(args.samples)]
    batch = min(args.concurrency, len(prompts))
    result = {"placement": args.placement, "concurrency": args.concurrency, "episodes": len(prompts),
              "turns": args.turns, "new_tokens": args.new_tokens,
              "peak_tokens_per_s": peak_tokens_per_s(engine.module, prompts[:batch], args.new_tokens, fmt.end_id)}  # fmt: skip
    limits = SandboxLimits(cpuset="1" if pinned else "", cpus=1.0)
    for mode in ("async", "lockstep"):
        cfg = RolloutConfig(task_ids=tuple(t.id for t in tasks), samples=args.samples, concurrency=args.concurrency,
                            mode=mode, verify=False, max_turns=args.turns, max_new_tokens=args.new_tokens + 64,
                            temperature=1.0, seed=1)  # fmt: skip
        with tempfile.TemporaryDirectory() as tmp:
            store = Store(Path(tmp) / "run", create=True)
            policy = ThoughtThenCommand(engine, fmt, args.new_tokens)
            async with PoolSet(size=args.concurrency, max_active=args.concurrency, limits=limits) as pools:
                await pools.pool(pack.image)
                await asyncio.sleep(2)  # let the warm pool fill
                tokens_before = engine.stats().generated_tokens
                report = await Rollout(cfg, store, pack, policy, fmt, pools).run()
            tokens = engine.stats().generated_tokens - tokens_before
            tool_s = sum(e.timings["tool_s"] for e in store.episodes())
            gen_s = sum(e.timings["generate_s"] for e in store.episodes())
        summary = report.as_dict()
        result[mode] = {
            "wall_s": summary["wall_s"],
            "episodes_per_min": summary["episodes_per_min"],
            "tokens_per_s": tokens / summary["wall_s"],
            "engine_busy_fraction": summary["engine_busy_fraction"],
            "engine_utilisation": summary["engine_utilisation"],
            "tool_s_per_turn": tool_s / (len(prompts) * args.turns),
            "generate_s_per_turn": gen_s / (len(prompts) * args.turns),
            "statuses": summary["statuses"],
        }
    await engine.close()
    result["async_over_lockstep"] = result["async"]["tokens_per_s"] / result["lockstep"]["tokens_per_s"]
    result["async_over_peak"] = result["async"]["tokens_per_s"] / result["peak_tokens_per_s"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--new-tokens", type=int, default=24)
    parser.add_argument("--placement", choices=("pinned", "shared", "both"), default="both")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.placement != "both":
        print(json.dumps(asyncio.run(one_placement(args))))
        return
    results = []
    for placement in ("pinned", "shared"):
        sizes = ["--tasks", args.tasks, "--samples", args.samples, "--concurrency", args.concurrency,
                 "--turns", args.turns, "--new-tokens", args.new_tokens]  # fmt: skip
        argv = [sys.executable, __file__, *map(str, sizes), "--placement", placement]  # the children print
        out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
        results.append(json.loads(out.strip().splitlines()[-1]))
    for r in results:
        a, b = r["async"], r["lockstep"]
        print(f"\n{r['placement']}: {r['episodes']} episodes x {r['turns']} turns, concurrency {r['concurrency']}, "
              f"peak {r['peak_tokens_per_s']:.0f} tokens/s")  # fmt: skip
        print(f"  {'':10} {'ep/min':>8} {'tok/s':>8} {'busy':>6} {'util':>6} {'gen s/turn':>11} {'tool s/turn':>12}")
        for name, m in (("async", a), ("lockstep", b)):
            busy = m["engine_busy_fraction"] or 0
            print(f"  {name:10} {m['episodes_per_min']:8.1f} {m['tokens_per_s']:8.0f} {busy:6.0%} "
                  f"{m['engine_utilisation']:6.0%} {m['generate_s_per_turn']:11.2f} {m['tool_s_per_turn']:12.2f}")  # fmt: skip
        print(f"  async/lockstep {r['async_over_lockstep']:.2f}x; async/peak {r['async_over_peak']:.0%}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
