#!/usr/bin/env python
"""Rollout benchmark: async scheduling vs lock-step, against the engine's own peak, in one run.

Real podman sandboxes, the real SmolLM2-135M in the `hf` engine, terminal-coding bug-fix
tasks (a Python project with its test suite). Each model turn is the model's own sampled tokens
(up to --new-tokens, stopping where the model stops; the turn keeps them up to the first backtick, so
its only code block is the command), followed by the command an agent runs on such a task. The untrained 135M model seldom writes a command that runs at all, so without this the tools
would take no time and there would be nothing to overlap; the commands run in real containers, and
every generated token is the real model's. Two kinds of tools:

    cpu   the test suite three times, a grep, a compile check: real CPU work, and every container
          shares one core (pinned) or two (shared) with the others, so 16 test runs at once take
          16 times as long as one
    wait  a build or test run on CPUs of its own, as in a deployment where each sandbox has cores
          of its own (this machine has one for all of them): `sleep D` in the container, then a
          `git diff --stat`; D is drawn from a lognormal (--tool-median, --tool-sigma: build and test
          times have a long tail), the same list of draws for every mode, in call order

The engine decodes at most --concurrency rows at once (its batch: the accelerator's memory), in
every mode; the modes differ in how they keep it fed:

    peak           static-batch `model.generate` of the same prompts, decode only (every row generates
                   --new-tokens; the prefill is measured apart and left out), at batch = concurrency
                   on the first prompts and on the episodes' middle-turn contexts (longer: a step
                   attends to more), and at the mean batch the engine decoded in async; also static
                   generate on those contexts as it is, each prompt prefilled from scratch (no prefix
                   cache, no continuous batching: the baseline engine)
    async          the scheduler with --in-flight episodes (3x the batch by default), each in its own
                   sandbox, alternating model and tools: while some run tools the rest fill the batch;
                   also measured until its last episode starts (the steady state: no drain at the end)
    replay         async's own model calls again on a fresh engine, each episode's turns back to back as if
                   its tools took no time, --in-flight episodes at once: the engine's throughput on this
                   very work (prefill and prefix-cache hits included) when nothing waits for a tool, which
                   is what async would reach if it hid every tool perfectly
    lockstep       the synchronous baseline: waves of `concurrency` episodes, in which every episode
                   generates (one batch), then every episode runs its tools
    lockstep_wide  lock-step with as many sandboxes as async (waves of --in-flight; the engine takes
                   them a batch at a time), so that sandboxes alone do not explain the difference
    async_in_process  async again with the engine a thread of the scheduler's process, sharing its
                   interpreter lock (the other modes run it in a process of its own, as `ptrain
                   rollout` does by default; --engine-in-process runs every mode in process)

The peak is measured before and after the runs (this machine is shared: the higher counts).
Placements: `pinned` (the engine alone on core 0 with one torch thread; the containers,
podman and the scheduler's event loop on core 1, as on a real deployment where the accelerator and
the CPUs that serve the tools are separate) and `shared` (both use both cores).
Each (placement, tools) case runs in its own process so thread and affinity settings stay clean.

Run: .venv/bin/python scripts/bench_rollout.py [--cases pinned:cpu,shared:cpu,pinned:wait] [--json out.json]
     (--async-only --tasks 120: async and its replay alone on 480 episodes, whose drain weighs little)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

COMMANDS = (  # each runs the project's test suite a few times (checking for flaky failures), as agents do
    "cd /workspace/{p} && for i in 1 2 3; do python3 -m pytest -q -x 2>&1 | tail -1; done",
    "cd /workspace/{p} && grep -rln 'def ' --include=*.py {p} | head -3 && for i in 1 2 3; do python3 -m pytest -q 2>&1 | tail -1; done",
    "cd /workspace/{p} && git diff --stat && python3 -m compileall -q {p} && for i in 1 2 3; do python3 -m pytest -q 2>&1 | tail -1; done",
)

RUN_NAMES = ("async", "lockstep", "lockstep_wide", "async_in_process")  # the modes that run episodes in sandboxes

WAIT_COMMAND = "cd /workspace/{p} && sleep {seconds:.2f} && git diff --stat"


@dataclass
class ThoughtThenCommand:
    """An engine whose turns are the real model's tokens followed by the workload's next command.

    With `waits`, the command is `sleep` for the next of them, then `git diff --stat` (the `wait` tools).
    """

    engine: object
    fmt: object
    new_tokens: int
    waits: list[float] | None = None
    calls: list[Call] | None = None  # where to record each call, for the replay
    commands: set[str] = field(default_factory=set)  # every command it appended

    def __getattr__(self, name):
        return getattr(self.engine, name)

    def thought(self, ids) -> list[int]:
        """The model's tokens up to where it stopped or wrote a backtick: a code block of its own would run
        instead of the command (or be refused), and a command it writes may block until the tool's timeout."""
        kept = []
        for token in ids:
            if token == self.fmt.end_id or "`" in self.fmt.tokenizer.decode([token]):
                break
            kept.append(token)
        return kept

    async def generate(self, token_ids, sampling):
        from ptrain.engine.base import Completion

        prompt = self.fmt.render_text(token_ids)
        turn = prompt.count("<|im_start|>assistant") - 1
        project = re.search(r"/workspace/(\w+)", prompt).group(1)
        if self.waits is None:
            command = COMMANDS[turn % len(COMMANDS)].format(p=project)
        else:
            command = WAIT_COMMAND.format(p=project, seconds=self.waits.pop())
        self.commands.add(command)
        action = self.fmt.encode(f"\n```bash\n{command}\n```") + [self.fmt.end_id]
        budget = min(self.new_tokens, sampling.max_new_tokens - len(action))
        real = await self.engine.generate(token_ids, replace(sampling, max_new_tokens=budget))
        thought = self.thought(real.token_ids)
        ids = tuple(thought) + tuple(action)
        if self.calls is not None:
            self.calls.append(Call(tuple(token_ids), tuple(thought), len(real.token_ids)))
        return Completion(ids, real.logprobs[: len(thought)] + (0.0,) * len(action), "stop", real.policy_version,
                          real.prompt_tokens, real.queued_s, real.generate_s)  # fmt: skip


@dataclass(frozen=True)
class Call:
    """One model turn as async ran it: the prompt, the model's own tokens in the reply, how many it sampled."""

    prompt: tuple[int, ...]
    thought: tuple[int, ...]
    sampled: int


def episode_chains(calls: list[Call]) -> list[list[Call]]:
    """The recorded calls as episodes: a call continues the episode whose last prompt and thought it starts
    with, the longest such (a sibling's first turn with no thought starts every turn of the family)."""
    chains: list[list[Call]] = []
    for call in calls:  # in call order: an episode's turn is recorded after the one before it
        heads = [(len(c[-1].prompt) + len(c[-1].thought), c) for c in chains]
        fits = [(n, c) for n, c in heads if len(call.prompt) > n and call.prompt[:n] == c[-1].prompt + c[-1].thought]
        if fits:
            max(fits, key=lambda fit: fit[0])[1].append(call)
        else:
            chains.append([call])
    return chains


async def replay(engine, chains: list[list[Call]], in_flight: int, steady: SteadyWindow) -> float:
    """Async's own model calls again, each episode's turns back to back (its tools take no time), `in_flight`
    episodes at once: the engine's throughput on this very work when nothing waits for a tool. Returns the wall.

    Each call samples as many tokens as it did in async (no stop token) from a prompt as long as async's:
    the replay's own earlier tokens, then the command and tool output async's episode had, so the prefix
    cache reuses as much as it did in async."""
    from ptrain.engine.base import Sampling

    gate, finished = asyncio.Semaphore(in_flight), 0

    async def episode(chain: list[Call]) -> None:
        nonlocal finished
        async with gate:
            prompt, sampled = list(chain[0].prompt), ()
            for before, call in zip([None, *chain], chain, strict=False):
                if before is not None:  # this replay's thought in place of async's, then what followed it there
                    rest = call.prompt[len(before.prompt) + len(before.thought) :]
                    prompt = prompt + list(sampled[: len(before.thought)]) + list(rest)
                out = await engine.generate(prompt, Sampling(max_new_tokens=call.sampled, temperature=1.0))
                sampled = out.token_ids
            finished += 1
            steady.reached(finished)

    start = time.monotonic()
    await asyncio.gather(*(episode(chain) for chain in chains))
    return time.monotonic() - start


def slowest_episode(episodes) -> dict:
    """The episode whose tools took longest (what a drain at the end waits for), call by call."""
    e = max(episodes, key=lambda e: e.timings["tool_s"])
    calls = [(c["arguments"].get("command", "")[-48:], round(c["duration_s"], 2)) for c in e.tool_calls]
    return {"wall_s": e.timings["wall_s"], "tool_s": e.timings["tool_s"], "attempts": e.metadata["attempts"],
            "calls": calls}  # fmt: skip


def middle_turn_prompt(episode) -> list[int]:
    """What the engine was given for the episode's middle model turn: its tokens before that turn's."""
    mask = episode.loss_mask
    starts = [i for i, m in enumerate(mask) if m and (i == 0 or not mask[i - 1])] or [len(mask)]
    return list(episode.token_ids[: starts[len(starts) // 2]])


class SteadyWindow:
    """The run until its last episode starts: every sandbox busy, before the drain at the end.

    After `finished` episodes have finished (all but one sandbox's worth), the queue is empty and the
    episodes in flight only dwindle: a long-running rollout never drains, so this window is its figure."""

    def __init__(self, finished: int, engine):
        self.finished, self.engine = max(finished, 1), engine
        self.started, self.end = time.monotonic(), None

    def update(self, rollout) -> None:
        self.reached(rollout.report.finished)

    def reached(self, finished: int) -> None:
        if self.end is None and finished >= self.finished:
            self.end = time.monotonic(), self.engine.stats()

    def figures(self, before) -> dict:
        if self.end is None:
            return {}
        at, stats = self.end
        return engine_figures(before, stats, at - self.started)


def engine_figures(before, after, wall: float) -> dict:
    """What the engine did between two of its `stats()`, over `wall` seconds."""
    tokens = after.generated_tokens - before.generated_tokens
    requests = after.requests - before.requests  # each one's first token comes from its prefill
    counts = {
        key: after.extra[key] - before.extra[key]
        for key in ("decode_steps", "prefill_tokens", "prefix_hit_tokens", "decode_cells", "decode_context_tokens")
    }
    steps, cells, rows = counts["decode_steps"], counts["decode_cells"], tokens - requests  # rows: decoded tokens
    busy = after.busy_s - before.busy_s
    return {
        "wall_s": wall,
        "tokens_per_s": tokens / wall,
        "tokens_per_busy_s": tokens / busy if busy else 0.0,
        "mean_decode_batch": rows / steps if steps else 0.0,
        "mean_decode_width": cells / rows if rows > 0 else 0.0,
        "decode_padding": 1 - counts["decode_context_tokens"] / cells if cells else 0.0,
        "engine_utilisation": busy / wall,
        "engine": counts | {"busy_s": busy, "requests": requests},
    }


def peak_tokens_per_s(model, prompts: list[list[int]], new_tokens: int, pad_id: int, prefill: bool = False) -> float:
    """Static-batch decode: `model.generate` of every row for exactly `new_tokens`, less the same call
    for one token (the prompts' prefill), so the figure is the engine's decode rate at this batch size.
    With `prefill`, the whole call: static-batch generate as it is, every prompt prefilled from scratch."""
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
        if prefill:
            return len(prompts) * new_tokens / timed(new_tokens)
        return len(prompts) * (new_tokens - 1) / (timed(new_tokens) - timed(1))


async def replay_run(engine, calls: list[Call], in_flight: int) -> dict:
    """`replay` on `engine` (closed after, unless it is the in-process one, whose prefix cache is cleared first)."""
    from ptrain.engine.hf import HFEngine

    if isinstance(engine, HFEngine):
        with engine.paused():
            pass
    chains = episode_chains(calls)
    before, steady = engine.stats(), SteadyWindow(len(chains) - in_flight, engine)
    wall = await replay(engine, chains, in_flight, steady)
    after = engine.stats()
    if not isinstance(engine, HFEngine):
        await engine.close()
    return {"episodes": len(chains), "calls": len(calls), "steady": steady.figures(before)} | engine_figures(
        before, after, wall
    )


def tool_side() -> None:
    """Move this thread (the event loop; threads it starts inherit it) and the podman service to core 1.

    Only the engine's thread stays on core 0. Everything that serves the tools (the scheduler's loop,
    podman's client threads, the API service, conmon, the containers) shares core 1, as the CPUs of a
    deployment do while the accelerator computes."""
    from ptrain.sandbox import runtime

    os.sched_setaffinity(0, {1})
    runtime.ensure_service()  # if this starts it, it inherits core 1; if it ran already, move it
    for pid in subprocess.run(["pgrep", "-f", "podman system service"], capture_output=True, text=True).stdout.split():
        subprocess.run(["taskset", "-a", "-cp", "1", pid], capture_output=True, check=False)


async def one_placement(args) -> dict:
    import torch
    from transformers import AutoTokenizer

    from ptrain.engine.hf import HFEngine
    from ptrain.engine.local_server import LocalServerEngine
    from ptrain.engine.models import resolve_model
    from ptrain.rollout.chat import DEFAULT_SYSTEM, ChatFormat
    from ptrain.rollout.config import RolloutConfig
    from ptrain.rollout.scheduler import Rollout
    from ptrain.sandbox import PoolSet, runtime
    from ptrain.sandbox.container import SandboxLimits
    from ptrain.store import Store
    from ptrain.taskpack import load

    pinned = args.placement == "pinned"
    if pinned:  # the engine's thread, started by HFEngine from this one, inherits core 0
        os.sched_setaffinity(0, {0})
        torch.set_num_threads(1)
    path = resolve_model("smollm2-135m")
    fmt = ChatFormat(AutoTokenizer.from_pretrained(path), "bash")
    pack = load("terminal-coding")
    mutants = [t for t in pack.tasks("train") if t.id.startswith("mutants/")]
    tasks = mutants[:: max(1, len(mutants) // args.tasks)][: args.tasks]  # spread over the split's projects
    engine = HFEngine.load(path, dtype=args.dtype, max_batch=args.concurrency)  # the peak's model, and in-process runs'
    prompts = [fmt.prompt_ids(DEFAULT_SYSTEM, t.instruction, pack.tools()) for t in tasks for _ in range(args.samples)]
    batch = min(args.concurrency, len(prompts))
    options = {"max_batch": args.concurrency, "dtype": args.dtype, "threads": 1 if pinned else 0}
    result = {"placement": args.placement, "tools": args.tools, "concurrency": args.concurrency, "dtype": args.dtype,
              "tool_median": args.tool_median,
              "engine_process": not args.engine_in_process,
              "episodes": len(prompts), "turns": args.turns, "new_tokens": args.new_tokens,
              "peak_runs": [peak_tokens_per_s(engine.module, prompts[:batch], args.new_tokens, fmt.end_id)]}  # fmt: skip
    if pinned:
        tool_side()
    else:
        runtime.ensure_service()
    draws = random.Random(0)
    waits = [min(draws.lognormvariate(0, args.tool_sigma) * args.tool_median, 8 * args.tool_median)
             for _ in range(2 * len(prompts) * args.turns)]  # fmt: skip
    limits = SandboxLimits(cpuset="1" if pinned else "", cpus=1.0)
    in_flight = args.in_flight or 3 * args.concurrency
    process = not args.engine_in_process
    runs = [("async", "async", in_flight, process), ("lockstep", "lockstep", args.concurrency, process)]
    if in_flight != args.concurrency:
        runs.append(("lockstep_wide", "lockstep", in_flight, process))
    if process:  # the same async run with the engine a thread of this process, as before
        runs.append(("async_in_process", "async", in_flight, False))
    if args.async_only:
        runs = runs[:1]

    def child_engine() -> LocalServerEngine:
        """A fresh `ptrain serve` child, as `ptrain rollout` starts it; pinned, alone on core 0."""
        if pinned:
            os.sched_setaffinity(0, {0})  # the child inherits core 0; this thread goes back to core 1
        try:
            return LocalServerEngine.start(str(path), options, fmt.tokenizer)
        finally:
            if pinned:
                os.sched_setaffinity(0, {1})

    calls: list[Call] = []
    for name, mode, sandboxes, in_child in runs:
        cfg = RolloutConfig(task_ids=tuple(t.id for t in tasks), samples=args.samples, concurrency=sandboxes,
                            mode=mode, verify=False, max_turns=args.turns, max_new_tokens=args.new_tokens + 64,
                            temperature=1.0, seed=1)  # fmt: skip
        with tempfile.TemporaryDirectory() as tmp:
            store = Store(Path(tmp) / "run", create=True)
            if in_child:  # a fresh server each mode: each starts cold
                run_engine = child_engine()
            else:
                run_engine = engine
                with engine.paused():  # clears the prefix cache: each mode starts cold
                    pass
            policy = ThoughtThenCommand(run_engine, fmt, args.new_tokens, list(waits) if args.tools == "wait" else None,
                                        calls if name == "async" else None)  # fmt: skip
            async with PoolSet(size=sandboxes, max_active=sandboxes, limits=limits) as pools:
                await pools.pool(pack.image)
                await asyncio.sleep(2)  # let the warm pool fill
                before, steady = run_engine.stats(), SteadyWindow(len(prompts) - sandboxes, run_engine)
                report = await Rollout(cfg, store, pack, policy, fmt, pools, on_update=steady.update).run()
            after = run_engine.stats()
            if run_engine is not engine:
                await run_engine.close()
            episodes = list(store.episodes())  # one read of the run's shards
        tool_s = sum(e.timings["tool_s"] for e in episodes)
        ran = sum(call["arguments"].get("command") in policy.commands for e in episodes for call in e.tool_calls)
        gen_s = sum(e.timings["generate_s"] for e in episodes)
        if mode == "async":
            contexts = [middle_turn_prompt(e) for e in episodes]
        summary = report.as_dict()
        result[name] = engine_figures(before, after, summary["wall_s"]) | {
            "sandboxes": sandboxes,
            "episodes_per_min": summary["episodes_per_min"],
            "engine_busy_fraction": summary["engine_busy_fraction"],
            "engine_utilisation": summary["engine_utilisation"],  # the report's, as `ptrain rollout` shows it
            "tool_s_per_turn": tool_s / (len(prompts) * args.turns),
            "turns_running_their_command": ran / (len(prompts) * args.turns),
            "generate_s_per_turn": gen_s / (len(prompts) * args.turns),
            "statuses": summary["statuses"],
            "steady": steady.figures(before),
            "infra_retries": summary["infra_retries"],
            "slowest_episode": slowest_episode(episodes),
        }
        if name == "async":  # the same work at once, while the machine is as it was
            result["replay"] = await replay_run(child_engine() if process else engine, calls, in_flight)
    mean_batch = max(1, round(result["async"]["mean_decode_batch"]))
    result["async_mean_batch"] = mean_batch
    if pinned:
        os.sched_setaffinity(0, {0})  # the peak is the engine's: back on its core
    result["peak_runs"].append(peak_tokens_per_s(engine.module, prompts[:batch], args.new_tokens, fmt.end_id))
    result["peak_tokens_per_s"] = max(result["peak_runs"])  # before and after the runs: the machine's noise
    result["peak_at_mean_batch"] = peak_tokens_per_s(engine.module, prompts[:mean_batch], args.new_tokens, fmt.end_id)
    result["peak_at_episode_contexts"] = peak_tokens_per_s(engine.module, contexts[:batch], args.new_tokens, fmt.end_id)
    result["generate_at_episode_contexts"] = peak_tokens_per_s(
        engine.module, contexts[:batch], args.new_tokens, fmt.end_id, prefill=True
    )
    result["mean_episode_context"] = sum(map(len, contexts[:batch])) / batch
    await engine.close()
    if "lockstep" in result:
        result["async_over_lockstep"] = result["async"]["episodes_per_min"] / result["lockstep"]["episodes_per_min"]
        result["async_over_lockstep_tokens"] = result["async"]["tokens_per_s"] / result["lockstep"]["tokens_per_s"]
    if "lockstep_wide" in result:
        result["async_over_lockstep_wide"] = (
            result["async"]["episodes_per_min"] / result["lockstep_wide"]["episodes_per_min"]
        )
    result["async_over_peak"] = result["async"]["tokens_per_s"] / result["peak_tokens_per_s"]
    result["async_over_peak_at_mean_batch"] = result["async"]["tokens_per_s"] / result["peak_at_mean_batch"]
    result["async_over_peak_at_episode_contexts"] = result["async"]["tokens_per_s"] / result["peak_at_episode_contexts"]
    if "async_in_process" in result:
        result["async_over_async_in_process"] = (
            result["async"]["tokens_per_s"] / result["async_in_process"]["tokens_per_s"]
        )
    result["async_over_replay"] = result["async"]["tokens_per_s"] / result["replay"]["tokens_per_s"]
    if result["async"]["steady"]:
        result["async_steady_over_peak"] = result["async"]["steady"]["tokens_per_s"] / result["peak_tokens_per_s"]
        result["async_steady_over_replay"] = (
            result["async"]["steady"]["tokens_per_s"] / (result["replay"]["steady"] or result["replay"])["tokens_per_s"]
        )  # each until its last episode starts
    return result


def fast_cpu_dtype() -> str:
    """bfloat16 where this CPU multiplies it in hardware (about 1.5x float32's decode and 3.5x its prefill
    for SmolLM2-135M on one AMX core), else float32 (emulated bfloat16 is slower than float32)."""
    try:
        flags = Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return "float32"
    return "bfloat16" if {"amx_bf16", "avx512_bf16"} & set(flags) else "float32"


def cases(text: str) -> list[tuple[str, str]]:
    """`--cases`: comma-separated placement:tools pairs, e.g. `pinned:cpu,shared:wait`."""
    pairs = [tuple(case.split(":")) for case in text.split(",")]
    for pair in pairs:
        if len(pair) != 2 or pair[0] not in ("pinned", "shared") or pair[1] not in ("cpu", "wait"):
            raise argparse.ArgumentTypeError(f"{':'.join(pair)!r} is not placement:tools (pinned|shared : cpu|wait)")
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=24)
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--in-flight", type=int, default=0,
                        help="episodes async keeps in flight, each in its own sandbox (default: 3x concurrency)")  # fmt: skip
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--new-tokens", type=int, default=24)
    parser.add_argument("--tool-median", type=float, default=3.0,
                        help="seconds, for the wait tools (3: a mean about as long as a lock-step wave's generation)")  # fmt: skip
    parser.add_argument("--tool-sigma", type=float, default=0.8, help="the lognormal's sigma, for the wait tools")
    parser.add_argument("--cases", type=cases, default="pinned:cpu,shared:cpu,pinned:wait", help="placement:tools, ...")
    parser.add_argument("--placement", choices=("pinned", "shared"), help=argparse.SUPPRESS)  # one case, in a child
    parser.add_argument("--tools", choices=("cpu", "wait"), default="cpu", help=argparse.SUPPRESS)
    parser.add_argument("--dtype", default=fast_cpu_dtype(), help="the engine's weights (default: %(default)s, "
                        "bfloat16 where the CPU multiplies it in hardware: AMX or AVX512-BF16)")  # fmt: skip
    parser.add_argument("--engine-in-process", action="store_true",
                        help="every mode with the engine a thread of the scheduler's process, not a process of its own")  # fmt: skip
    parser.add_argument("--async-only", action="store_true",
                        help="async and its replay only: for long runs, in which the drain at the end weighs little")  # fmt: skip
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if min(args.tasks, args.samples, args.concurrency, args.turns, args.new_tokens) < 1 or args.in_flight < 0:
        parser.error(
            "--tasks, --samples, --concurrency, --turns and --new-tokens must be at least 1, --in-flight 0 or more"
        )
    if args.placement:
        print(json.dumps(asyncio.run(one_placement(args))))
        return
    results = []
    for placement, tools in args.cases:
        sizes = ["--tasks", args.tasks, "--samples", args.samples, "--concurrency", args.concurrency,
                 "--in-flight", args.in_flight, "--turns", args.turns, "--new-tokens", args.new_tokens,
                 "--tool-median", args.tool_median, "--tool-sigma", args.tool_sigma, "--dtype", args.dtype]  # fmt: skip
        argv = [sys.executable, __file__, *map(str, sizes), "--placement", placement, "--tools", tools]
        argv += ["--engine-in-process"] if args.engine_in_process else []
        argv += ["--async-only"] if args.async_only else []
        out = subprocess.run(argv, stdout=subprocess.PIPE, text=True, check=True).stdout  # the child prints
        results.append(json.loads(out.strip().splitlines()[-1]))
    for r in results:
        print(f"\n{r['placement']}, {r['tools']} tools: {r['episodes']} episodes x {r['turns']} turns, "
              f"concurrency {r['concurrency']}, {r['dtype']}, engine {'in a process of its own' if r['engine_process'] else 'in process'}, "
              f"decode peak {r['peak_tokens_per_s']:.0f} tokens/s at batch "
              f"{r['concurrency']}, {r['peak_at_mean_batch']:.0f} at async's mean batch {r['async_mean_batch']}")  # fmt: skip
        print(
            f"  {'':16} {'sandboxes':>6} {'ep/min':>8} {'tok/s':>8} {'busy':>6} {'util':>6} {'batch':>6} {'gen s/turn':>11} {'tool s/turn':>12}"
        )
        for name in RUN_NAMES:
            if name not in r:
                continue
            m = r[name]
            busy = m["engine_busy_fraction"] or 0
            print(f"  {name[:16]:16} {m['sandboxes']:6} {m['episodes_per_min']:8.1f} {m['tokens_per_s']:8.1f} {busy:6.0%} "
                  f"{m['engine_utilisation']:6.0%} {m['mean_decode_batch']:6.1f} {m['generate_s_per_turn']:11.2f} "
                  f"{m['tool_s_per_turn']:12.2f}")  # fmt: skip
        if "async_over_lockstep" in r:
            print(f"  async/lockstep {r['async_over_lockstep']:.2f}x episodes/min, "
                  f"{r['async_over_lockstep_tokens']:.2f}x tokens/s; async/lockstep with as many sandboxes "
                  f"{r.get('async_over_lockstep_wide', r['async_over_lockstep']):.2f}x")  # fmt: skip
        print(f"  async/peak {r['async_over_peak']:.0%} (at its mean batch {r['async_over_peak_at_mean_batch']:.0%})")
        print(f"  the decode peak at batch {r['concurrency']} on the episodes' middle-turn contexts "
              f"({r['mean_episode_context']:.0f} tokens): {r['peak_at_episode_contexts']:.0f} tokens/s; "
              f"async {r['async_over_peak_at_episode_contexts']:.0%} of it; static generate there, its prefill "
              f"included: {r['generate_at_episode_contexts']:.0f} tokens/s, async "
              f"{r['async']['tokens_per_s'] / r['generate_at_episode_contexts']:.0%} of it")  # fmt: skip
        print(f"  the decode peak before and after the runs: {', '.join(f'{p:.0f}' for p in r['peak_runs'])} tokens/s")
        rep = r["replay"]
        print(f"  replay: async's {rep['calls']} model calls again, {rep['episodes']} episodes' turns back to back "
              f"(no tools): {rep['tokens_per_s']:.1f} tokens/s at a mean batch of {rep['mean_decode_batch']:.1f}, "
              f"engine busy {rep['engine_utilisation']:.0%}; async {r['async_over_replay']:.0%} of it"
              + (f"; until their last episodes start, the replay {rep['steady']['tokens_per_s']:.1f} tokens/s, async "
                 f"{r['async_steady_over_replay']:.0%} of it" if rep["steady"] and "async_steady_over_replay" in r else ""))  # fmt: skip
        print("  tokens per busy second of the engine, mean decode width (padding): " + ", ".join(
              f"{n} {r[n]['tokens_per_busy_s']:.1f}, {r[n]['mean_decode_width']:.0f} ({r[n]['decode_padding']:.0%})"
              for n in ("async", "replay", *RUN_NAMES[1:]) if n in r))  # fmt: skip
        if "async_over_async_in_process" in r:
            print(
                f"  async with the engine in a process of its own / in process: {r['async_over_async_in_process']:.2f}x tokens/s"
            )
        print("  turns that ran the command appended to them: "
              + ", ".join(f"{n} {r[n]['turns_running_their_command']:.0%}" for n in RUN_NAMES if n in r)
              + " (the rest: the model's own code block ran or was refused, as the format's parser has it)")  # fmt: skip
        slowest = r["async"]["slowest_episode"]
        print(f"  async's slowest episode: tools {slowest['tool_s']:.1f} s of its {slowest['wall_s']:.1f} s "
              f"(attempt {slowest['attempts']}; infra retries in the run: {r['async']['infra_retries']})")  # fmt: skip
        longest = r["turns"] * 8 * r["tool_median"] + 10  # every turn's draw at its cap, and some
        for name in RUN_NAMES:
            if r["tools"] == "wait" and name in r and r[name]["slowest_episode"]["tool_s"] > longest:
                print(f"  {name}'s slowest episode took longer than its commands: {r[name]['slowest_episode']}")
        if "async_steady_over_peak" in r:
            steady = r["async"]["steady"]
            print(f"  async until its last episode starts ({steady['wall_s']:.0f} s): {steady['tokens_per_s']:.1f} "
                  f"tokens/s at a mean batch of {steady['mean_decode_batch']:.1f}, engine busy {steady['engine_utilisation']:.0%}, {r['async_steady_over_peak']:.0%} of the "
                  f"peak, {steady['tokens_per_s'] / r['peak_at_episode_contexts']:.0%} of the peak on its contexts")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
