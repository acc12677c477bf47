#!/usr/bin/env python
"""Predict ptrain's rollout at scales this machine cannot run, with the simulator in ptrain/sim.py.

    sim_scale.py measure RUN... [--engine-bench] [--bench-json F]   distributions -> scripts/sim_inputs.json
    sim_scale.py validate [--measured RUN...] [--measured-json F]    prediction vs measurement on this machine
    sim_scale.py sweep [--engine h200-7b-vllm] [--json F]            8-1,024 accelerators, 64-100,000 sandboxes
    sim_scale.py plot [--sweep-json F] [--out docs/sim_scale.png]

measure reads real run directories: per episode its turns (tokens to prefill, as the engine's prefix
cache leaves them; tokens sampled; tool seconds), setup and artifact seconds; per run the mean
verification time (verdicts carry no duration: the metrics file's verify episode-seconds over the
verified count), the config, the summary, and the engine's decode rate at each steady batch size (the
per-second snapshots). --engine-bench times this machine's engine operations (decode steps at batch
1-8 and two widths, prefill, cache copies; SmolLM2-135M, one thread, CPU seconds, so a busy machine
does not inflate them) and fits ptrain.sim_types.CPU_HERE. --bench-json keeps bench_rollout.py's results.

validate simulates each measured run from its own episodes and compares episodes/min and engine
utilisation. What is fitted: the engine's cost curve (the engine bench), scaled by one factor so that
its step at the run's steady batch matches the decode rate the run's own snapshots show (the same
engine ran slower or faster as the machine was busy). Predicted: throughput and utilisation.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

from ptrain.sim import simulate
from ptrain.sim_fleet import Hosts, simulate_fleet
from ptrain.sim_types import CPU_HERE, ENGINES, INSTANT, EngineCost, EpisodeShape, SimConfig, Turn

INPUTS = Path(__file__).with_name("sim_inputs.json")
ACCELERATORS = (8, 32, 128, 512, 1024)
SANDBOXES = (64, 1000, 10000, 100000)
# bench_rollout's workload, counted with the SmolLM2 tokenizer on its tasks and commands: the prompts (206-222
# tokens, 166 shared by all), each turn's command (44, 62, 59 tokens: COMMANDS in turn order) and a tool result
# of three pytest summary lines (39 tokens with its template), 2 tokens closing the assistant turn.
BENCH_WORKLOAD = {"prompt_tokens": 212, "shared_prefix": 166, "commands": [44, 62, 59], "tool_result": 39,
                  "suffix": 2, "setup_s": None}  # fmt: skip


# --- measure ------------------------------------------------------------------------------------------------------


def _lcp(a: np.ndarray, b: np.ndarray) -> int:
    n = min(len(a), len(b))
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if len(differ) else n


def episode_shape(episode, earlier_prompts: list[np.ndarray], verify_s: float) -> list:
    """[setup_s, artifact_s, verify_s, [[prefill, decode, tool_s, context], ...]] for one stored episode."""
    mask = np.asarray(episode.loss_mask, np.int8)
    edges = np.flatnonzero(np.diff(np.r_[0, mask, 0]))
    starts, ends = edges[::2], edges[1::2]
    tools = Counter()
    for call in episode.tool_calls:
        tools[call.get("turn", 0)] += call.get("duration_s", 0.0)
    spare = max(0.0, episode.timings.get("tool_s", 0.0) - sum(tools.values())) / max(1, len(starts))
    prompt = np.asarray(episode.token_ids[: starts[0]]) if len(starts) else np.zeros(0)
    shared = max([_lcp(prompt, p) for p in earlier_prompts] + [0])
    earlier_prompts.append(prompt)
    turns = []
    for k, (start, end) in enumerate(zip(starts, ends, strict=True)):
        prefill = max(1, start - shared) if k == 0 else start - ends[k - 1] + 1  # the cache lacks the last token
        turns.append([int(prefill), int(end - start), round(tools[k + 1] + spare, 4), int(start)])
    return [round(episode.timings.get("setup_s", 0.0), 4), round(episode.timings.get("artifact_s", 0.0), 4),
            round(verify_s, 4), turns]  # fmt: skip


def read_metrics(run: Path, episodes: int) -> dict:
    """The rollout metrics file of the run that made these episodes: config, summary, snapshots."""
    best = None
    for path in sorted((run / "metrics").glob("rollout-*.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        summary = next((r for r in rows if r["kind"] == "summary"), None)
        if summary and summary["finished"] and (best is None or abs(summary["finished"] - episodes) < best[0]):
            config = next(r for r in rows if r["kind"] == "config")
            best = (abs(summary["finished"] - episodes), config, summary, [r for r in rows if r["kind"] == "snapshot"])
    if best is None:
        raise SystemExit(f"{run}: no rollout metrics with a summary of finished episodes")
    return {"config": best[1], "summary": best[2], "snapshots": best[3]}


def decode_rates(snapshots: list[dict]) -> dict[int, float]:
    """Tokens/s at each batch size held for a whole second, nobody joining, no sandbox busy: the decode rate."""
    by_rows: dict[int, list[tuple[float, float]]] = {}
    for before, after in zip(snapshots, snapshots[1:], strict=False):
        rows = after.get("engine_running", 0)
        steady = before.get("engine_running") == rows and before.get("in_generate") == after.get("in_generate")
        alone = not any(s.get(k) for s in (before, after) for k in ("in_tools", "in_verify", "engine_waiting"))
        if rows and steady and alone:
            by_rows.setdefault(rows, []).append((after["tokens_per_s_now"], after["elapsed_s"] - before["elapsed_s"]))
    return {rows: sum(r * dt for r, dt in seen) / sum(dt for _, dt in seen)
            for rows, seen in by_rows.items() if len(seen) >= 5}  # fmt: skip


def measure_run(run: Path) -> dict:
    from ptrain.store import Store

    store = Store(run)
    episodes = sorted(store.episodes(), key=lambda e: e.finished_at)
    metrics = read_metrics(run, len(episodes))
    last = metrics["snapshots"][-1] if metrics["snapshots"] else {}
    verified = last.get("verified") or 0
    verify_s = last.get("verify_episode_s", 0.0) / verified if verified else 0.0
    config = {k: metrics["config"].get(k) for k in ("taskpack", "engine", "concurrency", "verify_concurrency",
                                                    "mode", "verify", "max_turns", "max_new_tokens", "max_batch", "engine_threads")}  # fmt: skip
    keys = ("finished", "wall_s", "episodes_per_min", "engine_utilisation", "engine_busy_fraction", "engine_busy_s",
            "model_tokens", "verified")  # fmt: skip
    prompts: list[np.ndarray] = []
    return {
        "config": config,
        "measured": {k: metrics["summary"].get(k) for k in keys},
        "verify_s": verify_s,
        "decode_tokens_per_s": decode_rates(metrics["snapshots"]),
        "episodes": [episode_shape(e, prompts, verify_s) for e in episodes if e.status != "error"],
    }


def bench_engine(threads: int = 1, steps: int = 5) -> dict:
    """CPU seconds of the hf engine's operations on SmolLM2-135M: decode steps, prefill, cache copies."""
    import torch
    from transformers import AutoModelForCausalLM, DynamicCache

    from ptrain.engine.models import resolve_model

    torch.set_num_threads(threads)
    model = AutoModelForCausalLM.from_pretrained(resolve_model("smollm2-135m"), dtype=torch.float32).eval()
    cfg = model.config
    heads, dim = cfg.num_key_value_heads, cfg.hidden_size // cfg.num_attention_heads

    def cache(rows: int, width: int) -> DynamicCache:
        kv = DynamicCache(config=cfg)
        for layer in kv.layers:
            layer.update(torch.randn(rows, heads, width, dim), torch.randn(rows, heads, width, dim))
        return kv

    def cpu_s(fn, *args, **kwargs) -> float:
        t0 = time.process_time()
        fn(*args, **kwargs)
        return time.process_time() - t0

    def forward_s(kv: DynamicCache, rows: int, width: int, fed: int) -> float:
        """One forward pass feeding `fed` tokens a row after `width` cached ones, as the engine's are."""
        ids = torch.randint(100, 1000, (rows, fed))
        mask = torch.ones(rows, width + fed, dtype=torch.long)
        pos = torch.arange(width, width + fed).expand(rows, fed)
        return cpu_s(model, input_ids=ids, attention_mask=mask, position_ids=pos, past_key_values=kv,
                     use_cache=True, logits_to_keep=1)  # fmt: skip

    points, prefill = [], []
    with torch.inference_mode():
        for width in (128, 512):
            for rows in (1, 2, 4, 8):
                kv = cache(rows, width)
                times = [forward_s(kv, rows, width + s, 1) for s in range(steps + 1)]  # the first warms up
                points.append({"rows": rows, "width": width, "step_s": statistics.median(times[1:])})
        for rows, fed in ((1, 8), (1, 32), (1, 128), (4, 32), (8, 32)):  # over a cached prefix, as later turns are
            prefill.append((rows * fed, forward_s(cache(rows, 256), rows, 256, fed)))
        big, index = cache(8, 512), torch.arange(7)
        # a join pads and concatenates the keys and the values; a leave index-selects them
        merge = cpu_s(lambda: [torch.cat([t, t[:1]]) for layer in big.layers for t in (layer.keys, layer.values)])
        pick = cpu_s(lambda: [t.index_select(0, index) for layer in big.layers for t in (layer.keys, layer.values)])
    a = np.array([[1, p["rows"], p["rows"] * p["width"]] for p in points], float)
    fit, *_ = np.linalg.lstsq(a, np.array([p["step_s"] for p in points]), rcond=None)
    curve = [[rows, statistics.mean(p["step_s"] - fit[2] * rows * p["width"] for p in points if p["rows"] == rows)]
             for rows in sorted({p["rows"] for p in points})]  # fmt: skip
    pre, *_ = np.linalg.lstsq(np.array([[1, n] for n, _ in prefill], float), [t for _, t in prefill], rcond=None)
    return {"threads": threads, "points": points, "prefill_points": prefill, "decode_a_s": float(fit[0]),
            "decode_b_s": float(fit[1]), "decode_kv_s": float(fit[2]), "decode_curve": curve,
            "prefill_a_s": float(pre[0]), "prefill_s_per_token": float(pre[1]),
            "copy_s_per_kv_token": (merge + pick) / 2 / (8 * 512)}  # fmt: skip


def cmd_measure(args) -> None:
    data = json.loads(args.out.read_text()) if args.out.exists() else {}
    data["about"] = "measured on this machine by scripts/sim_scale.py measure; see its docstring"
    runs = data.setdefault("runs", {})
    for run in args.runs:
        runs[str(run)] = measure_run(run)
        m = runs[str(run)]
        print(
            f"{run}: {len(m['episodes'])} episodes, verify {m['verify_s']:.2f} s, decode rates {m['decode_tokens_per_s']}"
        )
    if args.engine_bench:
        data["engine_bench"] = bench_engine()
        print("engine bench:", {k: v for k, v in data["engine_bench"].items() if k != "points"})
    if args.bench_json:
        data["bench_rollout"] = {"results": json.loads(args.bench_json.read_text()), "workload": BENCH_WORKLOAD}
    text = json.dumps(data, indent=1)
    text = re.sub(
        r"\[\s+([^\[\]{}]*?)\s+\]", lambda m: "[" + re.sub(r"\s+", " ", m.group(1)) + "]", text
    )  # short lists on a line
    args.out.write_text(text + "\n")
    print(f"wrote {args.out}")


# --- from inputs to shapes and engines ----------------------------------------------------------------------------


def shapes_of(episodes: list) -> list[EpisodeShape]:
    return [EpisodeShape(tuple(Turn(p, d, t, c) for p, d, t, c in turns), setup, artifact, verify)
            for setup, artifact, verify, turns in episodes]  # fmt: skip


def cpu_engine(data: dict) -> EngineCost:
    bench = data.get("engine_bench")
    if not bench:
        return CPU_HERE
    keys = ("decode_a_s", "decode_b_s", "prefill_s_per_token", "prefill_a_s", "decode_kv_s", "copy_s_per_kv_token")
    curve = tuple((int(rows), float(t)) for rows, t in bench.get("decode_curve", ()))
    return EngineCost("cpu-here", **{k: bench[k] for k in keys}, max_batch=64, decode_curve=curve)


def engine_for_run(data: dict, run: dict, shapes: list[EpisodeShape]) -> tuple[EngineCost, float | None]:
    """The engine a measured run had, and the factor on the engine bench: instant for the gold policy (None);
    else the bench's curve slowed so that its step at the run's largest steady batch matches the run's decode rate."""
    rates = {int(k): v for k, v in run["decode_tokens_per_s"].items() if v > 0}
    if run["config"]["engine"] == "gold" or not rates:
        return (INSTANT if run["config"]["engine"] == "gold" else cpu_engine(data)), None
    rows, base = max(rates), cpu_engine(data)
    width = statistics.mean(t.context_tokens + t.decode_tokens / 2 for s in shapes for t in s.turns)
    factor = rows / rates[rows] / base.step_s(rows, int(width))
    return base.scaled(factor), factor


def bench_shapes(workload: dict, result: dict, mode: str, setup_s: float, tool_cv: float) -> list[EpisodeShape]:
    """bench_rollout's episodes: tasks x 2 samples, `turns` turns of `new_tokens`, its measured tool time a turn.

    The bench reports only the mean tool time; each task's project and command takes its own time, drawn
    (seeded) around that mean with a coefficient of variation `tool_cv`, the same for both samples of a task.
    """
    w, new, tool_s = workload, result["new_tokens"], result[mode]["tool_s_per_turn"]
    sigma = math.sqrt(math.log(1 + tool_cv**2))
    spread = np.random.default_rng(0).lognormal(-(sigma**2) / 2, sigma, (result["episodes"], result["turns"]))
    spread *= 1 / spread.mean()
    shapes = []
    for i in range(result["episodes"]):
        first = w["prompt_tokens"] if i == 0 else w["prompt_tokens"] - w["shared_prefix"] if i % 2 == 0 else 1
        turns, context = [], w["prompt_tokens"]
        for k in range(result["turns"]):
            prefill = first if k == 0 else 1 + w["commands"][(k - 1) % 3] + w["suffix"] + w["tool_result"]
            context += 0 if k == 0 else prefill - 1
            turns.append(Turn(prefill, new, tool_s * spread[i // 2, k], context))
            context += new
        shapes.append(EpisodeShape(tuple(turns), setup_s))
    return shapes


# --- validate -----------------------------------------------------------------------------------------------------


def _row(kind: str, name: str, mode: str, measured: float, predicted: float, util: tuple, note: str) -> dict:
    error = (predicted - measured) / measured
    print(f"  {name:38} {mode:8} {measured:7.2f} {predicted:7.2f} {error:+7.1%} {util[0]:5.0%} {util[1]:5.0%}  {note}")
    return {"kind": kind, "run": name, "mode": mode, "measured_episodes_per_min": measured,
            "predicted_episodes_per_min": predicted, "error": error, "measured_engine_utilisation": util[0],
            "predicted_engine_utilisation": util[1], "note": note}  # fmt: skip


def load_changed(run: dict) -> bool:
    """A smaller batch decoded more tokens/s than the largest: the machine's load changed during the run."""
    rates = {int(k): v for k, v in run["decode_tokens_per_s"].items()}
    return bool(rates) and any(v > rates[max(rates)] for v in rates.values())


def validate_runs(args, data: dict, runs: dict) -> list[dict]:
    rows = []
    for name, run in runs.items():
        shapes, c, m = shapes_of(run["episodes"]), run["config"], run["measured"]
        engine, factor = engine_for_run(data, run, shapes)
        batch, rate = max((int(k), v) for k, v in run["decode_tokens_per_s"].items() if v > 0) if factor else (0, 0)
        note = f"engine bench x{factor:.2f} (decode {rate:.0f} tok/s at batch {batch})" if factor else "engine bench"
        config = SimConfig(concurrency=c["concurrency"], mode=c["mode"], verify_concurrency=c["verify_concurrency"],
                           engine=engine, starts_per_s=Hosts().starts_per_s_per_host, cpu_cores=args.cores,
                           engine_threads=c.get("engine_threads") or args.engine_threads)  # fmt: skip
        result = simulate(shapes, config)
        kind = "scheduler" if engine is INSTANT else "varying load" if load_changed(run) else "engine"
        note = {
            "scheduler": "gold policy: verification-bound, checks the accounting only",
            "varying load": f"{note}; load changed mid-run, not counted",
        }.get(kind, note)
        utils = (m["engine_utilisation"], result.window()["engine_utilisation"])
        rows.append(_row(kind, name, c["mode"], m["episodes_per_min"], result.episodes_per_min, utils, note))
    return rows


def validate_bench(args, data: dict, bench: list[dict], setup_s: float) -> list[dict]:
    """bench_rollout's runs: the engine curve scaled to the decode peak that run measured, its mean tool times."""
    workload, base, rows = data.get("bench_rollout", {}).get("workload", BENCH_WORKLOAD), cpu_engine(data), []
    for result in bench:
        width = workload["prompt_tokens"] + result["new_tokens"] // 2
        factor = (result["concurrency"] / result["peak_tokens_per_s"]) / base.step_s(result["concurrency"], width)
        shared = (
            args.cores if result["placement"] == "shared" else 0
        )  # pinned: engine and containers on their own cores
        predicted = {}
        for mode in ("async", "lockstep"):
            config = SimConfig(concurrency=result["concurrency"], mode=mode, engine=base.scaled(factor),
                               cpu_cores=shared, engine_threads=args.engine_threads)  # fmt: skip
            sim = simulate(bench_shapes(workload, result, mode, setup_s, args.tool_cv), config)
            m, predicted[mode] = result[mode], sim.episodes_per_min
            rows.append(_row("engine", f"bench_rollout {result['placement']}", mode, m["episodes_per_min"],
                             sim.episodes_per_min, (m["engine_utilisation"], sim.window()["engine_utilisation"]),
                             f"engine bench x{factor:.2f} (its decode peak {result['peak_tokens_per_s']:.0f} tok/s)"))  # fmt: skip
        measured = result["async"]["episodes_per_min"] / result["lockstep"]["episodes_per_min"]
        print(
            f"  {'':38} async/lock-step: measured {measured:.2f}, predicted {predicted['async'] / predicted['lockstep']:.2f}"
        )
    return rows


def cmd_validate(args) -> None:
    data = json.loads(args.inputs.read_text())
    runs = dict(data.get("runs", {}))
    for run in args.measured or ():
        runs[str(run)] = measure_run(run)
    print(f"  {'run':38} {'mode':8} {'meas.':>7} {'pred.':>7} {'error':>7} {'utl m':>5} {'utl p':>5}  engine")
    rows = validate_runs(args, data, runs)
    bench = (
        json.loads(args.measured_json.read_text())
        if args.measured_json
        else data.get("bench_rollout", {}).get("results", [])
    )
    setups = [e[0] for run in runs.values() if run["config"]["taskpack"] == "terminal-coding" for e in run["episodes"]]
    rows += validate_bench(args, data, bench, statistics.median(setups) if setups else 0.85)
    for kind in ("engine", "scheduler"):
        errors = [abs(r["error"]) for r in rows if r["kind"] == kind]
        if errors:
            worst = max(errors)
            print(
                f"{kind} rows: worst error {worst:.1%} ({'within' if worst <= 0.15 else 'OUTSIDE'} 15%), mean {statistics.mean(errors):.1%}"
            )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


# --- sweep and plot -----------------------------------------------------------------------------------------------


def sweep_workload(data: dict, name: str) -> list[EpisodeShape]:
    """The episodes a sweep runs.

    measured: every episode the real model produced in a measured run that verified its episodes on an
    otherwise idle machine (engine within 1.5x of the engine bench, steady load), with that run's mean
    verification time. bench: bench_rollout's tool-heavy episodes (3 turns, a test suite run a turn, the
    pinned lock-step tool times), verified as long as the measured runs' verifications took.
    """
    quiet = {n: r for n, r in data["runs"].items() if r["config"]["engine"] == "hf" and r["verify_s"] > 0
             and not load_changed(r)}  # fmt: skip
    measured = []
    for run in quiet.values():
        shapes = shapes_of(run["episodes"])
        measured += shapes if (engine_for_run(data, run, shapes)[1] or 1.0) < 1.5 else []
    if name == "measured":
        return measured
    pinned = next(r for r in data["bench_rollout"]["results"] if r["placement"] == "pinned")
    verify_s = statistics.median(s.verify_s for s in measured)
    shapes = bench_shapes(data["bench_rollout"]["workload"], pinned, "lockstep", 0.0, 0.1)
    setups = [s.setup_s for s in measured]
    return [replace(s, setup_s=setups[i % len(setups)], verify_s=verify_s) for i, s in enumerate(shapes)]


def run_sweep(args, data: dict) -> list[dict]:
    engine = ENGINES[args.engine] if args.engine != "cpu-here" else cpu_engine(data)
    overrides = {
        k: getattr(args, k) for k in ("decode_a_s", "decode_b_s", "prefill_s_per_token") if getattr(args, k) is not None
    }
    engine = EngineCost(**{**engine.__dict__, **overrides, "max_batch": args.max_batch or engine.max_batch})
    workload = sweep_workload(data, args.workload)
    points, t0 = [], time.perf_counter()
    for starts in (args.starts_per_s_per_host, math.inf):
        hosts = Hosts(sandboxes_per_host=args.sandboxes_per_host, starts_per_s_per_host=starts)
        for accelerators in ACCELERATORS:
            for sandboxes in SANDBOXES:
                for mode in ("async", "lockstep"):
                    p = simulate_fleet(workload, accelerators, sandboxes, engine, mode, hosts, seed=args.seed)
                    points.append(
                        {
                            **p.__dict__,
                            "starts_per_s_per_host": starts,
                            "engine": engine.name,
                            "sandboxes_per_host": args.sandboxes_per_host,
                        }
                    )
    print(f"{len(points)} points in {time.perf_counter() - t0:.0f} s; engine {engine}")
    return points


def print_table(points: list[dict]) -> None:
    for starts in sorted({p["starts_per_s_per_host"] for p in points}):
        hosts = (
            f"{starts:g} starts/s per {points[0]['sandboxes_per_host']} sandboxes"
            if math.isfinite(starts)
            else "unlimited"
        )
        print(f"\ncontainer starts: {hosts}")
        print(f"{'accel':>5} {'sandboxes':>9} | {'async ep/h':>11} {'peak':>4} {'batch':>5} {'held':>7} {'verif':>5} "
              f"{'starts/s':>8} {'bottleneck':16} | {'lock-step ep/h':>14} {'peak':>4} {'bottleneck':16} | {'async/ls':>8}")  # fmt: skip
        for a in ACCELERATORS:
            for s in SANDBOXES:
                x, y = (next(p for p in points if p["starts_per_s_per_host"] == starts and p["accelerators"] == a
                             and p["sandboxes"] == s and p["mode"] == mode) for mode in ("async", "lockstep"))  # fmt: skip
                ratio = x["episodes_per_hour"] / max(y["episodes_per_hour"], 1e-9)
                verify = x["sandboxes_verifying_mean"] / x["sandboxes_held_mean"]
                print(f"{a:5} {s:9,} | {x['episodes_per_hour']:11,.0f} {x['engine_utilisation']:4.0%} "
                      f"{x['engine_rows_mean']:5.0f} {x['sandboxes_held_mean']:7,.0f} {verify:5.0%} {x['starts_per_s']:8,.0f} "
                      f"{x['bottleneck']:16} | {y['episodes_per_hour']:14,.0f} {y['engine_utilisation']:4.0%} "
                      f"{y['bottleneck']:16} | {ratio:8.2f}")  # fmt: skip


def cmd_sweep(args) -> None:
    points = run_sweep(args, json.loads(args.inputs.read_text()))
    print_table(points)
    if args.json:
        args.json.write_text(json.dumps(points, indent=1) + "\n")


def cmd_plot(args) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = (
        json.loads(args.sweep_json.read_text())
        if args.sweep_json
        else run_sweep(args, json.loads(args.inputs.read_text()))
    )
    fig, axes = plt.subplots(2, 2, figsize=(11, 8), sharex=True)
    colours = dict(zip(SANDBOXES, ("tab:blue", "tab:orange", "tab:green", "tab:red"), strict=True))
    for row, starts in enumerate(sorted({p["starts_per_s_per_host"] for p in points})):
        for s in SANDBOXES:
            for mode, style in (("async", "-"), ("lockstep", "--")):
                line = sorted((p for p in points if p["sandboxes"] == s and p["mode"] == mode
                               and p["starts_per_s_per_host"] == starts), key=lambda p: p["accelerators"])  # fmt: skip
                x = [p["accelerators"] for p in line]
                label = f"{s:,} sandboxes, {mode}"
                axes[row, 0].plot(
                    x, [p["episodes_per_hour"] for p in line], style, color=colours[s], marker="o", ms=3, label=label
                )
                axes[row, 1].plot(x, [p["engine_utilisation"] for p in line], style, color=colours[s], marker="o", ms=3)
        hosts = (
            f"starts {starts:g}/s per {points[0]['sandboxes_per_host']} sandboxes (measured here)"
            if math.isfinite(starts)
            else "container starts unlimited"
        )
        axes[row, 0].set(xscale="log", yscale="log", ylabel="verified episodes / hour", title=hosts)
        axes[row, 1].set(xscale="log", ylim=(0, 1.05), ylabel="engine utilisation (of decode peak)", title=hosts)
    for ax in axes[1]:
        ax.set_xlabel("accelerators (one engine replica each)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8)
    engine = points[0]["engine"] + (" (an assumed engine)" if points[0]["engine"] == "h200-7b-vllm" else "")
    fig.suptitle(f"ptrain rollout, simulated: {engine}, episodes as measured here; async solid, lock-step dashed")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure", help="distributions from run directories into the inputs file")
    m.add_argument("runs", nargs="*", type=Path)
    m.add_argument("--engine-bench", action="store_true", help="time this machine's engine operations (about a minute)")
    m.add_argument("--bench-json", type=Path, help="bench_rollout.py --json output to keep for validate")
    m.add_argument("--out", type=Path, default=INPUTS)
    v = sub.add_parser("validate", help="prediction vs measurement on this machine")
    v.add_argument("--measured", nargs="*", type=Path, help="more run directories to predict (read now)")
    v.add_argument("--measured-json", type=Path, help="bench_rollout.py --json output (instead of the kept one)")
    v.add_argument("--json", type=Path)
    v.add_argument("--cores", type=int, default=2, help="the cores the measured runs' engine shared with sandboxes")
    v.add_argument("--engine-threads", type=int, default=1, help="cores the engine keeps busy (1 fits the runs best)")
    v.add_argument("--tool-cv", type=float, default=0.1, help="bench_rollout's tool-time spread (it reports means)")
    for name, p in (("sweep", sub.add_parser("sweep", help="the scale grid")), ("plot", sub.add_parser("plot"))):
        p.add_argument("--engine", choices=("h200-7b-vllm", "cpu-here"), default="h200-7b-vllm")
        p.add_argument("--decode-a-s", type=float, help="your engine's decode step at batch 1 (measured)")
        p.add_argument("--decode-b-s", type=float, help="what each row adds to a decode step")
        p.add_argument("--prefill-s-per-token", type=float)
        p.add_argument("--max-batch", type=int)
        p.add_argument("--sandboxes-per-host", type=int, default=Hosts().sandboxes_per_host)
        p.add_argument("--starts-per-s-per-host", type=float, default=Hosts().starts_per_s_per_host)
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--workload", choices=("measured", "bench"), default="measured")
        p.add_argument("--json" if name == "sweep" else "--sweep-json", type=Path)
        if name == "plot":
            p.add_argument("--out", type=Path, default=Path("docs/sim_scale.png"))
    for name, p in sub.choices.items():
        if name != "measure":
            p.add_argument("--inputs", type=Path, default=INPUTS)
    args = parser.parse_args()
    {"measure": cmd_measure, "validate": cmd_validate, "sweep": cmd_sweep, "plot": cmd_plot}[args.command](args)


if __name__ == "__main__":
    main()
