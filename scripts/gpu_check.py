#!/usr/bin/env python
"""GPU check: the engine, the scheduler and the trainer on one accelerator, measured in one short run.

The model is SmolLM2-135M's architecture with random weights (built from its config.json, so no
weights travel), saved as a checkpoint in a temporary directory and loaded by ptrain's own loaders.
Random weights never emit EOS reliably, so every generation runs to max_new_tokens: the figures are
throughput, not quality. Sections (each one records its error and the run goes on):

    env       versions, the device, the total wall time
    static    `model.generate` static-batch decode rate by batch size (prefill measured apart and left out,
              as scripts/bench_rollout.py's `peak_tokens_per_s` does) and the cost of one decode step
    engine    ptrain's HFEngine: B concurrent `generate` calls, against the static figures at the same batch
    train     ptrain's GRPO Trainer (LoRA) for a few steps on a synthetic store, shared prefix on and off
    sharded   full fine-tuning on the same kind of store under `strategy = "fsdp"` (FSDP2, bfloat16 compute,
              float32 master weights, a one-process NCCL group) and under `ddp`: tokens/s, peak memory,
              MFU (6 x parameters x real tokens per second, against the chip's dense bf16 peak)
    rollout   C synthetic agent episodes, async vs lock-step, through HFEngine; the tools are
              `asyncio.sleep`s drawn from a lognormal (no podman on the device), their mean set to the
              measured lock-step generation time per turn

Results go to --out (JSON, rewritten after every measurement) and a summary is printed at the end.
Sections are skipped once --budget-s is spent; the rollout section also skips a size it estimates
would overrun it. The device needs torch, transformers, peft, accelerate, pyarrow, numpy; ptrain is
imported from this repository, and the `podman` package is stubbed when it is missing (ptrain.train
imports it through ptrain.engine.models -> ptrain.sandbox.runtime; nothing here runs a container).

    python scripts/gpu_check.py --prepare ~/.cache/ptrain/models/smollm2-135m   # copy the small files to .gpu/model
    python3 scripts/gpu_check.py --out $OUT/gpu_check.json                        # on the device (carry .gpu)
    python scripts/gpu_check.py --quick --out /tmp/gpu_check.json                 # tiny sizes, CPU, a minute
    python3 scripts/gpu_check.py --set episodes=32 --set turns=3 --budget-s 120   # any size of `Sizes`

On an H200 the default sizes take about 4 minutes (the rollout section is most of it).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import json
import math
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
import types
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # ptrain from this checkout: the device has it on no path
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # local directories only; the device reaches no hub

SMALL_FILES = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
               "special_tokens_map.json", "chat_template.jinja", "vocab.json", "merges.txt")  # fmt: skip
FIRST_ID = 100  # random prompt tokens are drawn from [FIRST_ID, vocab): no special tokens


@dataclasses.dataclass
class Sizes:
    layers: int = 0  # 0: the config's (30); fewer makes a CPU run quick
    prompt_tokens: int = 600  # static and engine sections
    new_tokens: int = 128
    static_batches: tuple[int, ...] = (1, 8, 32, 64, 128)
    engine_batches: tuple[int, ...] = (8, 32, 64, 128)
    episodes: tuple[int, ...] = (32, 128)  # concurrent episodes in the rollout section
    turns: int = 4
    episode_prompt_tokens: int = 400
    turn_tokens: int = 48  # new tokens per model turn
    tool_tokens: int = 100  # tokens a tool call appends
    tool_sigma: float = 0.8  # lognormal shape of the tool times
    tool_cap: float = 4.0  # no tool call takes longer than this many times the mean
    groups_per_step: int = 4
    samples: int = 8
    train_steps: int = 3
    train_prompt_tokens: int = 300
    train_turn_tokens: tuple[int, int] = (40, 80)  # model turns (3 per episode)
    train_tool_tokens: tuple[int, int] = (80, 200)  # tool outputs (2 per episode)
    micro_batch_tokens: tuple[int, ...] = (4096, 16384)  # shared prefix on and off at the first; on at the rest
    lora_rank: int = 16
    sharded_micro_batch_tokens: int = 16384


QUICK = Sizes(layers=4, prompt_tokens=32, new_tokens=8, static_batches=(1, 4), engine_batches=(4,), episodes=(4,),
              turns=2, episode_prompt_tokens=32, turn_tokens=8, tool_tokens=16, groups_per_step=2, samples=2,
              train_steps=2, train_prompt_tokens=40, train_turn_tokens=(8, 16), train_tool_tokens=(8, 24),
              micro_batch_tokens=(256, 4096), lora_rank=4, sharded_micro_batch_tokens=4096)  # fmt: skip


def override(sizes: Sizes, assignments: list[str]) -> Sizes:
    """`name=value` pairs over the sizes; tuples as comma-separated numbers."""
    changes = {}
    for item in assignments:
        name, _, value = item.partition("=")
        current = getattr(sizes, name)  # AttributeError names a wrong key
        if isinstance(current, tuple):
            changes[name] = tuple(type(current[0])(v) for v in value.split(","))
        else:
            changes[name] = type(current)(value)
    return dataclasses.replace(sizes, **changes)


class Report:
    """The results so far, rewritten to `out` after every measurement; sections run under a time budget."""

    def __init__(self, out: Path | None, budget_s: float):
        self.out, self.budget_s, self.started = out, budget_s, time.monotonic()
        self.results: dict = {"sections": {}, "errors": {}}

    def left(self) -> float:
        return self.budget_s - (time.monotonic() - self.started)

    def save(self) -> None:
        self.results["wall_s"] = round(time.monotonic() - self.started, 2)
        if self.out:
            tmp = self.out.with_name(self.out.name + ".tmp")
            tmp.write_text(json.dumps(self.results, indent=1, default=str))
            tmp.replace(self.out)

    def run(self, name: str, fn: Callable[..., None], *args) -> None:
        """fn(out, *args) fills `out` (saved as it goes); an exception is recorded and the run goes on."""
        out = self.results["sections"].setdefault(name, {})
        if self.left() <= 0:
            out["skipped"] = f"the budget of {self.budget_s:.0f}s was spent"
            print(f"[{name}] skipped: budget spent", flush=True)
            self.save()
            return
        print(f"[{name}] starting at {time.monotonic() - self.started:.0f}s", flush=True)
        t0 = time.monotonic()
        try:
            fn(out, *args)
        except Exception as exc:
            self.results["errors"][name] = f"{type(exc).__name__}: {exc}"
            out["traceback"] = traceback.format_exc()
            print(f"[{name}] FAILED: {type(exc).__name__}: {exc}\n{out['traceback']}", flush=True)
        out["section_s"] = round(time.monotonic() - t0, 2)
        self.save()

    def attempt(self, name: str, row: dict, fn: Callable[[], None]) -> None:
        """One measurement of a section: a failure is recorded in `row` and the section goes on."""
        try:
            fn()
        except Exception as exc:
            self.results["errors"][name] = row["error"] = f"{type(exc).__name__}: {exc}"
            row["traceback"] = traceback.format_exc()
            print(f"  {name} FAILED: {row['error']}\n{row['traceback']}", flush=True)
        self.save()


def stub_podman_if_missing() -> bool:
    """ptrain.train imports `podman` (through ptrain.sandbox.runtime) without using it here: stub it if absent."""
    try:
        import podman  # noqa: F401

        return False
    except ImportError:
        podman, errors = types.ModuleType("podman"), types.ModuleType("podman.errors")
        errors.NotFound = type("NotFound", (Exception,), {})
        podman.errors = errors
        sys.modules["podman"], sys.modules["podman.errors"] = podman, errors
        return True


def sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def random_prompts(rng, rows: int, length: int, vocab: int) -> list[list[int]]:
    return [rng.integers(FIRST_ID, vocab, length).tolist() for _ in range(rows)]


def make_checkpoint(config_dir: Path, out: Path, dtype, layers: int) -> Path:
    """SmolLM2-135M's architecture with random weights, saved with its tokenizer as a checkpoint."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    if not (config_dir / "config.json").is_file():
        raise FileNotFoundError(
            f"no config.json in {config_dir}: the model's config and tokenizer files are expected there; "
            "run `python scripts/gpu_check.py --prepare ~/.cache/ptrain/models/smollm2-135m` and carry .gpu"
        )
    config = AutoConfig.from_pretrained(config_dir)
    if layers:
        config.num_hidden_layers = layers
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config).to(dtype)
    model.save_pretrained(out, safe_serialization=True)
    for name in SMALL_FILES:
        if (config_dir / name).is_file() and not (out / name).exists():
            shutil.copy(config_dir / name, out / name)
    return out


# -- sections --------------------------------------------------------------------------------------


def env_section(out: dict, device: str, dtype, sizes: Sizes, stubbed: bool) -> None:
    import accelerate
    import peft
    import torch
    import transformers

    out.update(python=platform.python_version(), torch=torch.__version__, cuda=torch.version.cuda,
               transformers=transformers.__version__, peft=peft.__version__, accelerate=accelerate.__version__,
               device=device, dtype=str(dtype), cpus=os.cpu_count(), podman_stubbed=stubbed,
               sizes=dataclasses.asdict(sizes))  # fmt: skip
    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(device)
        out.update(device_name=props.name, capability=f"{props.major}.{props.minor}",
                   memory_gib=round(props.total_memory / 2**30, 1))  # fmt: skip


def static_section(out: dict, ctx: dict) -> None:
    """Static-batch `generate`: every row exactly new_tokens, less a 1-token call (the prefill)."""
    static_batches(out, ctx)
    free(ctx["device"])  # the model is gone with static_batches' frame


def static_batches(out: dict, ctx: dict) -> None:
    import numpy as np
    import torch
    from transformers import AutoModelForCausalLM

    sizes, device, report = ctx["sizes"], ctx["device"], ctx["report"]
    model = AutoModelForCausalLM.from_pretrained(ctx["checkpoint"], dtype=ctx["dtype"]).to(device).eval()
    pad_id = model.config.pad_token_id or 0
    rng = np.random.default_rng(1)
    n = sizes.new_tokens

    def timed(ids, mask, tokens: int) -> float:
        sync(device)
        t0 = time.perf_counter()
        model.generate(ids, attention_mask=mask, max_new_tokens=tokens, min_new_tokens=tokens, do_sample=True,
                       pad_token_id=pad_id)  # fmt: skip
        sync(device)
        return time.perf_counter() - t0

    out["batches"] = {}
    for batch in sizes.static_batches:
        row = out["batches"][str(batch)] = {}
        if report.left() <= 0:
            row["skipped"] = "budget spent"
            continue

        def measure(batch: int = batch, row: dict = row) -> None:
            ids = torch.tensor(random_prompts(rng, batch, sizes.prompt_tokens, ctx["vocab"]), device=device)
            mask = torch.ones_like(ids)
            with torch.inference_mode():
                timed(ids, mask, 2)  # warm up
                prefill_s, full_s = timed(ids, mask, 1), timed(ids, mask, n)
            decode_s = full_s - prefill_s
            row.update(prefill_s=prefill_s, full_s=full_s, step_ms=1000 * decode_s / (n - 1),
                       decode_tokens_per_s=batch * (n - 1) / decode_s,  # the peak, as bench_rollout's
                       e2e_tokens_per_s=batch * n / full_s)  # fmt: skip
            ctx["static"][batch] = row
            print(f"  static batch {batch:4}: {row['decode_tokens_per_s']:9.0f} tok/s decode, "
                  f"{row['step_ms']:6.1f} ms/step, prefill {prefill_s:.3f}s", flush=True)  # fmt: skip

        report.attempt(f"static batch {batch}", row, measure)


def free(device: str) -> None:
    import torch

    gc.collect()
    if device.startswith("cuda"):
        torch.cuda.empty_cache()


def get_engine(ctx: dict):
    from ptrain.engine.hf import HFEngine

    if ctx.get("engine") is None:
        biggest = max([*ctx["sizes"].engine_batches, *ctx["sizes"].episodes])
        ctx["engine"] = HFEngine.load(ctx["checkpoint"], device=ctx["device"], dtype=ctx["dtype"],
                                      max_batch=biggest, seed=0)  # fmt: skip
    return ctx["engine"]


async def burst(engine, prompts: list[list[int]], new_tokens: int, timeout_s: float) -> dict:
    """All prompts at once through the engine, each to exactly new_tokens (no stop tokens)."""
    from ptrain.engine.base import Sampling

    sampling = Sampling(max_new_tokens=new_tokens, temperature=1.0)
    before, t0 = engine.stats(), time.perf_counter()
    done = await asyncio.wait_for(asyncio.gather(*(engine.generate(p, sampling) for p in prompts)), timeout_s)
    wall = time.perf_counter() - t0
    after = engine.stats()
    tokens = sum(len(c.token_ids) for c in done)
    steps = after.extra["decode_steps"] - before.extra["decode_steps"]
    return {"wall_s": wall, "tokens": tokens, "tokens_per_s": tokens / wall, "decode_steps": steps,
            "wall_ms_per_decode_step": 1000 * wall / max(steps, 1), "busy_fraction": (after.busy_s - before.busy_s) / wall,
            "peak_batch": after.peak_batch}  # fmt: skip


def engine_section(out: dict, ctx: dict) -> None:
    import numpy as np

    sizes, report = ctx["sizes"], ctx["report"]
    t0 = time.perf_counter()
    engine = get_engine(ctx)
    out["load_s"] = time.perf_counter() - t0
    out["kv_budget_tokens"] = engine.kv_budget_tokens
    rng = np.random.default_rng(2)
    asyncio.run(burst(engine, random_prompts(rng, 2, sizes.prompt_tokens, ctx["vocab"]), 4, 120))  # warm up
    out["batches"] = {}
    for batch in sizes.engine_batches:
        row = out["batches"][str(batch)] = {}
        if report.left() <= 0:
            row["skipped"] = "budget spent"
            continue

        def measure(batch: int = batch, row: dict = row) -> None:
            prompts = random_prompts(rng, batch, sizes.prompt_tokens, ctx["vocab"])
            row.update(asyncio.run(burst(engine, prompts, sizes.new_tokens, max(60.0, report.left() + 30))))
            static = ctx["static"].get(batch)
            if static:
                row["over_static_e2e"] = row["tokens_per_s"] / static["e2e_tokens_per_s"]  # both with the prefill
                row["over_static_peak"] = row["tokens_per_s"] / static["decode_tokens_per_s"]
                row["step_ms_over_static"] = row["wall_ms_per_decode_step"] / static["step_ms"]
            print(f"  engine batch {batch:4}: {row['tokens_per_s']:9.0f} tok/s, {row['wall_ms_per_decode_step']:6.1f} "
                  f"ms/step, static e2e ratio {row.get('over_static_e2e', float('nan')):.2f}", flush=True)  # fmt: skip

        report.attempt(f"engine batch {batch}", row, measure)
    out["engine_stats"] = dataclasses.asdict(engine.stats())


async def episodes(engine, prompts, tools, sleeps, turn_tokens: int, lockstep: bool, timeout_s: float) -> dict:
    """Synthetic agent episodes: each turn generates turn_tokens, then a tool sleeps and appends its tokens."""
    from ptrain.engine.base import Sampling

    sampling = Sampling(max_new_tokens=turn_tokens, temperature=1.0)
    contexts = [list(p) for p in prompts]
    count, turns = len(prompts), len(sleeps[0])
    generated = [0]

    async def model_turn(i: int) -> None:
        done = await engine.generate(contexts[i], sampling)
        contexts[i].extend(done.token_ids)
        generated[0] += len(done.token_ids)

    async def tool_turn(i: int, turn: int) -> None:
        await asyncio.sleep(sleeps[i][turn])
        contexts[i].extend(tools[i][turn])

    async def episode(i: int) -> None:
        for turn in range(turns):
            await model_turn(i)
            await tool_turn(i, turn)

    async def all_lockstep() -> None:
        for turn in range(turns):
            await asyncio.gather(*(model_turn(i) for i in range(count)))
            await asyncio.gather(*(tool_turn(i, turn) for i in range(count)))

    before, t0 = engine.stats(), time.perf_counter()
    work = all_lockstep() if lockstep else asyncio.gather(*(episode(i) for i in range(count)))
    await asyncio.wait_for(work, timeout_s)
    wall = time.perf_counter() - t0
    after = engine.stats()
    return {"wall_s": wall, "episodes_per_min": 60 * count / wall, "tokens": generated[0],
            "tokens_per_s": generated[0] / wall, "busy_fraction": (after.busy_s - before.busy_s) / wall,
            "prefix_hit_tokens": after.extra["prefix_hit_tokens"] - before.extra["prefix_hit_tokens"],
            "prefill_tokens": after.extra["prefill_tokens"] - before.extra["prefill_tokens"]}  # fmt: skip


def rollout_section(out: dict, ctx: dict) -> None:
    sizes, report = ctx["sizes"], ctx["report"]
    get_engine(ctx)
    out["note"] = (
        "tools are asyncio.sleep calls (no podman on the device), lognormal, mean = lock-step generation time per turn"
    )
    out["sizes"] = {"turns": sizes.turns, "turn_tokens": sizes.turn_tokens, "tool_tokens": sizes.tool_tokens,
                    "prompt_tokens": sizes.episode_prompt_tokens, "tool_sigma": sizes.tool_sigma,
                    "tool_cap_over_mean": sizes.tool_cap}  # fmt: skip
    out["concurrency"] = {}
    for count in sizes.episodes:
        row = out["concurrency"][str(count)] = {}
        report.attempt(f"rollout C={count}", row, lambda count=count, row=row: rollout_one(count, row, ctx))


def rollout_one(count: int, row: dict, ctx: dict) -> None:
    """Calibrate the tool times on one lock-step turn, then run the episodes async and lock-step."""
    import numpy as np

    sizes, report, vocab, engine = ctx["sizes"], ctx["report"], ctx["vocab"], ctx["engine"]
    rng = np.random.default_rng(1000 + count)
    prompt = lambda: random_prompts(rng, count, sizes.episode_prompt_tokens, vocab)  # noqa: E731
    calibration = asyncio.run(burst(engine, prompt(), sizes.turn_tokens, max(60.0, report.left() + 30)))
    gen_turn_s = row["calibration_gen_turn_s"] = calibration["wall_s"]
    median = gen_turn_s / math.exp(sizes.tool_sigma**2 / 2)  # the lognormal's mean is gen_turn_s
    sleeps = np.minimum(rng.lognormal(math.log(median), sizes.tool_sigma, (count, sizes.turns)),
                        sizes.tool_cap * gen_turn_s)  # fmt: skip
    tools = [[rng.integers(FIRST_ID, vocab, sizes.tool_tokens).tolist() for _ in range(sizes.turns)]
             for _ in range(count)]  # fmt: skip
    row["tool_s"] = {"mean": float(sleeps.mean()), "median": float(np.median(sleeps)), "max": float(sleeps.max())}
    lockstep = sizes.turns * gen_turn_s * 1.5 + sleeps.max(axis=0).sum()
    estimate = lockstep + sizes.turns * gen_turn_s * 2 + sleeps.sum(axis=1).max()
    row["estimate_s"] = float(estimate)
    if estimate > report.left():
        row["skipped"] = f"estimated {estimate:.0f}s, {report.left():.0f}s of the budget left"
        print(f"  rollout C={count}: skipped ({row['skipped']})", flush=True)
        return
    for mode in ("async", "lockstep"):
        prompts = prompt()  # fresh prompts: no prefix-cache hits carried over from the other mode
        result = asyncio.run(episodes(engine, prompts, tools, sleeps.tolist(), sizes.turn_tokens,
                                      mode == "lockstep", max(60.0, report.left() + 60)))  # fmt: skip
        row[mode] = result
        print(f"  rollout C={count} {mode:8}: {result['episodes_per_min']:7.1f} ep/min, "
              f"{result['tokens_per_s']:8.0f} tok/s, busy {result['busy_fraction']:.0%}, "
              f"{result['wall_s']:.1f}s", flush=True)  # fmt: skip
        report.save()
    row["async_over_lockstep"] = row["async"]["tokens_per_s"] / row["lockstep"]["tokens_per_s"]
    static = ctx["static"].get(count)
    if static:
        row["async_over_static_peak"] = row["async"]["tokens_per_s"] / static["decode_tokens_per_s"]


def build_store(path: Path, ctx: dict) -> dict:
    """Groups of multi-turn episodes of random tokens; behaviour logprobs are the model's own."""
    import numpy as np
    import torch
    from transformers import AutoModelForCausalLM

    from ptrain.episode import Episode, StoredVerdict
    from ptrain.store import Store
    from ptrain.train.model import masked_logprobs

    sizes, device, vocab = ctx["sizes"], ctx["device"], ctx["vocab"]
    model = AutoModelForCausalLM.from_pretrained(ctx["checkpoint"], dtype=ctx["dtype"]).to(device).eval()
    rng = np.random.default_rng(3)
    span = lambda lo_hi: rng.integers(FIRST_ID, vocab, int(rng.integers(*lo_hi)))  # noqa: E731
    totals = {"episodes": 0, "tokens": 0, "model_tokens": 0}
    store = Store(path, create=True)
    with store.writer() as writer:
        for group in range(sizes.groups_per_step * sizes.train_steps):
            prompt = rng.integers(FIRST_ID, vocab, sizes.train_prompt_tokens)
            rewards = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], sizes.samples)
            rewards[:2] = [0.0, 1.0]  # never a flat group
            rows = []
            for _ in range(sizes.samples):
                parts, masks = [prompt], [np.zeros(len(prompt), bool)]
                for turn in range(3):
                    said = span(sizes.train_turn_tokens)
                    parts.append(said)
                    masks.append(np.ones(len(said), bool))
                    if turn < 2:
                        out = span(sizes.train_tool_tokens)
                        parts.append(out)
                        masks.append(np.zeros(len(out), bool))
                rows.append((np.concatenate(parts).astype(np.int32), np.concatenate(masks)))
            width = max(len(ids) for ids, _ in rows)
            ids = torch.zeros((len(rows), width), dtype=torch.long)
            attn, mask = torch.zeros_like(ids), torch.zeros_like(ids)
            for i, (row_ids, row_mask) in enumerate(rows):
                ids[i, : len(row_ids)], attn[i, : len(row_ids)] = torch.from_numpy(row_ids), 1
                mask[i, : len(row_ids)] = torch.from_numpy(row_mask)
            with torch.no_grad():
                logprobs = masked_logprobs(model, ids.to(device), attn.to(device), mask.to(device)).cpu().numpy()
            for sample, (row_ids, row_mask) in enumerate(rows):
                episode = Episode(run="gpu-check", taskpack="synthetic", task_id=f"task-{group}", split="train",
                                  group_id=f"task-{group}@0", sample_index=sample, group_size=sizes.samples,
                                  token_ids=row_ids, loss_mask=row_mask, logprobs=logprobs[sample, : len(row_ids)],
                                  model="random-smollm2-135m")  # fmt: skip
                writer.add(episode)
                writer.add_verdict(StoredVerdict(episode_id=episode.episode_id, reward=float(rewards[sample]),
                                                 passed=bool(rewards[sample] == 1.0)))  # fmt: skip
                totals["episodes"] += 1
                totals["tokens"] += len(row_ids)
                totals["model_tokens"] += int(row_mask.sum())
    del model
    free(device)
    return totals


def train_section(out: dict, ctx: dict) -> None:
    import torch

    from ptrain.store import Store
    from ptrain.train.config import TrainConfig
    from ptrain.train.loop import Trainer

    sizes, device, report = ctx["sizes"], ctx["device"], ctx["report"]
    work = Path(tempfile.mkdtemp(prefix="gpu-check-train-"))
    try:
        t0 = time.perf_counter()
        out["store"] = build_store(work / "store", ctx)
        out["store"]["build_s"] = time.perf_counter() - t0
        report.save()
        first, *more = sizes.micro_batch_tokens
        variants = [("shared_prefix", True, first), ("no_shared_prefix", False, first)]
        variants += [(f"shared_prefix_micro{m}", True, m) for m in more]
        for name, share, micro in variants:
            if report.left() <= 0:
                out[name] = {"skipped": "budget spent"}
                continue
            run = work / name
            shutil.copytree(work / "store", run)  # each a fresh run: neither resumes the other's checkpoint
            cfg = TrainConfig(model=str(ctx["checkpoint"]), device="cpu" if device == "cpu" else "cuda",
                              dtype="bfloat16" if ctx["dtype"] == torch.bfloat16 else "float32",
                              groups_per_step=sizes.groups_per_step, max_steps=sizes.train_steps, lr=1e-4,
                              lora_rank=sizes.lora_rank, lora_alpha=2 * sizes.lora_rank,
                              micro_batch_tokens=micro, share_prefix=share, tensorboard=False,
                              save_every=1000, seed=0)  # fmt: skip
            trainer = Trainer(cfg, run)
            lora = {k: p.detach().clone() for k, p in trainer.model.named_parameters() if "lora_" in k}
            if device.startswith("cuda"):
                torch.cuda.reset_peak_memory_stats()
            t0 = time.perf_counter()
            rows = trainer.train(Store(run))
            wall = time.perf_counter() - t0
            after = dict(trainer.model.named_parameters())
            changed = sum(not torch.equal(before, after[k].detach()) for k, before in lora.items())
            timed = rows[1:] or rows  # the first step warms up kernels and the allocator
            result = {"steps": len(rows), "micro_batch_tokens": micro, "share_prefix": share, "train_wall_s": wall,
                      "losses": [r["loss"] for r in rows],
                      "loss_finite": all(math.isfinite(r["loss"]) for r in rows),
                      "step_s": [r["step_s"] for r in rows], "tokens_per_s": [r["tokens_per_s"] for r in rows],
                      "mean_tokens_per_s_after_first": sum(r["tokens_per_s"] for r in timed) / len(timed),
                      "mean_step_s_after_first": sum(r["step_s"] for r in timed) / len(timed),
                      "padded_tokens": [r["padded_tokens"] for r in rows],
                      "computed_tokens": [r["computed_tokens"] for r in rows],
                      "mismatch": [r["mismatch"] for r in rows], "grad_norm": [r["grad_norm"] for r in rows],
                      "lora_tensors": len(lora), "lora_tensors_changed": int(changed),
                      "trainable_dtype": str(next(iter(lora.values())).dtype) if lora else None}  # fmt: skip
            if device.startswith("cuda"):
                result["peak_cuda_memory_gib"] = torch.cuda.max_memory_allocated() / 2**30
            out[name] = result
            print(f"  train {name}: {result['mean_tokens_per_s_after_first']:8.0f} tok/s, "
                  f"{result['mean_step_s_after_first']:.2f} s/step, losses {[round(x, 4) for x in result['losses']]}, "
                  f"LoRA changed {changed}/{len(lora)}", flush=True)  # fmt: skip
            del trainer, lora, after
            free(device)
            report.save()
        if "shared_prefix" in out and "no_shared_prefix" in out and "losses" in out["no_shared_prefix"]:
            out["shared_over_unshared_tokens_per_s"] = (
                out["shared_prefix"]["mean_tokens_per_s_after_first"]
                / out["no_shared_prefix"]["mean_tokens_per_s_after_first"]
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


# dense bfloat16 peak FLOP/s by device name (no sparsity), for MFU; an unknown chip gets no MFU
PEAK_BF16_FLOPS = {"H200": 989e12, "H100": 989e12, "A100": 312e12, "L40S": 362e12, "A10G": 70e12, "L4": 121e12}


def peak_flops(device: str) -> float | None:
    import torch

    if not device.startswith("cuda"):
        return None
    name = torch.cuda.get_device_name()
    return next((flops for chip, flops in PEAK_BF16_FLOPS.items() if chip in name), None)


def sharded_section(out: dict, ctx: dict) -> None:
    """Full fine-tuning under fsdp (FSDP2) and ddp on one device: tokens/s, peak memory, MFU."""
    import torch

    from ptrain.store import Store
    from ptrain.train.config import TrainConfig
    from ptrain.train.loop import Trainer

    sizes, device, report = ctx["sizes"], ctx["device"], ctx["report"]
    work = Path(tempfile.mkdtemp(prefix="gpu-check-sharded-"))
    peak = peak_flops(device)
    out["peak_bf16_flops"] = peak
    try:
        out["store"] = build_store(work / "store", ctx)
        report.save()
        for strategy in ("fsdp", "ddp"):
            if report.left() <= 0:
                out[strategy] = {"skipped": "budget spent"}
                continue
            run = work / strategy
            shutil.copytree(work / "store", run)
            cfg = TrainConfig(model=str(ctx["checkpoint"]), device="cpu" if device == "cpu" else "cuda",
                              dtype="bfloat16" if ctx["dtype"] == torch.bfloat16 else "float32", strategy=strategy,
                              lora=False, groups_per_step=sizes.groups_per_step, max_steps=sizes.train_steps,
                              lr=2e-6, micro_batch_tokens=sizes.sharded_micro_batch_tokens, tensorboard=False,
                              save_every=1000, seed=0)  # fmt: skip
            trainer = Trainer(cfg, run)
            params = sum(p.numel() for p in trainer.model.parameters())
            if device.startswith("cuda"):
                torch.cuda.reset_peak_memory_stats()
            rows = trainer.train(Store(run))
            timed = rows[1:] or rows  # the first step warms up kernels and the allocator
            step_s = sum(r["step_s"] for r in timed) / len(timed)
            tokens = sum(r["tokens_per_s"] * r["step_s"] for r in timed) / len(timed)  # real tokens, no padding
            flops = 6 * params * tokens / step_s  # forward 2N, backward 4N per token
            result = {"params": params, "steps": len(rows), "losses": [r["loss"] for r in rows],
                      "loss_finite": all(math.isfinite(r["loss"]) for r in rows),
                      "mean_step_s_after_first": step_s, "tokens_per_step": tokens,
                      "mean_tokens_per_s_after_first": sum(r["tokens_per_s"] for r in timed) / len(timed),
                      "model_flops_per_s": flops, "mfu": flops / peak if peak else None,
                      "grad_norm": [r["grad_norm"] for r in rows], "mismatch": [r["mismatch"] for r in rows]}  # fmt: skip
            if device.startswith("cuda"):
                result["peak_cuda_memory_gib"] = torch.cuda.max_memory_allocated() / 2**30
            out[strategy] = result
            mfu = f"{result['mfu']:.1%}" if result["mfu"] is not None else "n/a"
            print(f"  sharded {strategy}: {result['mean_tokens_per_s_after_first']:8.0f} tok/s, {step_s:.2f} s/step, "
                  f"MFU {mfu}, peak {result.get('peak_cuda_memory_gib', float('nan')):.2f} GiB, "
                  f"losses {[round(x, 4) for x in result['losses']]}", flush=True)  # fmt: skip
            del trainer
            free(device)
            report.save()
    finally:
        shutil.rmtree(work, ignore_errors=True)


# -- the summary -------------------------------------------------------------------------------


def summary(results: dict) -> str:
    s = results["sections"]
    lines = ["", "== gpu_check summary =="]
    env = s.get("env", {})
    lines.append(f"env: {env.get('device_name', env.get('device'))}, torch {env.get('torch')} (cuda {env.get('cuda')}), "
                 f"transformers {env.get('transformers')}, peft {env.get('peft')}, dtype {env.get('dtype')}, "
                 f"layers {env.get('layers')}, wall {results.get('wall_s')}s")  # fmt: skip
    static, engine = s.get("static", {}).get("batches", {}), s.get("engine", {}).get("batches", {})
    if static or engine:
        lines.append(f"{'batch':>6} {'static tok/s':>12} {'ms/step':>8} {'prefill s':>9} {'engine tok/s':>12} "
                     f"{'eng ms/step':>11} {'eng/static e2e':>14} {'eng/peak':>8}")  # fmt: skip
        for batch in sorted({*static, *engine}, key=int):
            a, b = static.get(batch, {}), engine.get(batch, {})
            lines.append(f"{batch:>6} {a.get('decode_tokens_per_s', float('nan')):12.0f} "
                         f"{a.get('step_ms', float('nan')):8.1f} {a.get('prefill_s', float('nan')):9.3f} "
                         f"{b.get('tokens_per_s', float('nan')):12.0f} {b.get('wall_ms_per_decode_step', float('nan')):11.1f} "
                         f"{b.get('over_static_e2e', float('nan')):14.2f} {b.get('over_static_peak', float('nan')):8.2f}")  # fmt: skip
    rollout = s.get("rollout", {})
    for count, row in rollout.get("concurrency", {}).items():
        if "async" not in row or "lockstep" not in row:
            lines.append(f"rollout C={count}: {row.get('skipped', 'incomplete')}")
            continue
        lines.append(
            f"rollout C={count} (tools = sleeps, mean {row['tool_s']['mean']:.2f}s, max {row['tool_s']['max']:.2f}s):"
        )
        for mode in ("async", "lockstep"):
            m = row[mode]
            lines.append(f"  {mode:8} {m['episodes_per_min']:8.1f} ep/min {m['tokens_per_s']:8.0f} tok/s "
                         f"busy {m['busy_fraction']:5.0%} wall {m['wall_s']:6.1f}s")  # fmt: skip
        peak = row.get("async_over_static_peak")
        lines.append(f"  async/lockstep {row['async_over_lockstep']:.2f}x"
                     + (f", async/static peak at batch {count} {peak:.0%}" if peak else ""))  # fmt: skip
    train = s.get("train", {})
    for name, t in train.items():
        if isinstance(t, dict) and ("skipped" in t or "error" in t):
            lines.append(f"train {name}: {t.get('skipped') or t.get('error')}")
        if isinstance(t, dict) and "losses" in t:
            computed = sum(t["computed_tokens"]) / max(sum(t["padded_tokens"]), 1)
            lines.append(f"train {name} (micro {t['micro_batch_tokens']}, computed/padded {computed:.2f}): "
                         f"{t['mean_tokens_per_s_after_first']:.0f} tok/s, "
                         f"{t['mean_step_s_after_first']:.2f} s/step, loss finite {t['loss_finite']}, "
                         f"LoRA changed {t['lora_tensors_changed']}/{t['lora_tensors']}, "
                         f"peak mem {t.get('peak_cuda_memory_gib', float('nan')):.2f} GiB")  # fmt: skip
    if "shared_over_unshared_tokens_per_s" in train:
        lines.append(f"train shared/unshared prefix: {train['shared_over_unshared_tokens_per_s']:.2f}x")
    for strategy, t in s.get("sharded", {}).items():
        if isinstance(t, dict) and "losses" in t:
            mfu = f"{t['mfu']:.1%}" if t.get("mfu") is not None else "n/a"
            lines.append(f"full fine-tuning {strategy}: {t['mean_tokens_per_s_after_first']:.0f} tok/s, "
                         f"{t['mean_step_s_after_first']:.2f} s/step, MFU {mfu}, "
                         f"peak mem {t.get('peak_cuda_memory_gib', float('nan')):.2f} GiB, loss finite {t['loss_finite']}")  # fmt: skip
        elif isinstance(t, dict) and "skipped" in t:
            lines.append(f"full fine-tuning {strategy}: {t['skipped']}")
    for name, error in results["errors"].items():
        lines.append(f"ERROR in {name}: {error}")
    skipped = [name for name, sec in s.items() if "skipped" in sec]
    if skipped:
        lines.append(f"skipped (budget): {', '.join(skipped)}")
    return "\n".join(lines)


def prepare(source: Path, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    copied = [name for name in SMALL_FILES if (source / name).is_file()]
    for name in copied:
        shutil.copy(source / name, target / name)
    print(f"copied {', '.join(copied)} to {target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-config", type=Path, default=REPO / ".gpu" / "model",
                        help="a directory with the model's config.json and tokenizer files (no weights needed)")  # fmt: skip
    parser.add_argument("--prepare", type=Path, metavar="MODEL_DIR",
                        help="copy MODEL_DIR's small files (config, tokenizer) into --model-config and exit")  # fmt: skip
    parser.add_argument("--out", type=Path, help="the JSON results, rewritten as the run goes")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (4 layers): a CPU run in minutes")
    parser.add_argument("--device", default="", help="cuda or cpu (default: cuda when there is one)")
    parser.add_argument("--dtype", default="", help="bfloat16 or float32 (default: bfloat16 on cuda, float32 on cpu)")
    parser.add_argument("--budget-s", type=float, default=270, help="skip what is left once this is spent")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="override one of the sizes (see Sizes), e.g. --set episodes=32 --set turns=3")  # fmt: skip
    args = parser.parse_args()
    if args.prepare:
        prepare(args.prepare.expanduser(), args.model_config)
        return

    report = Report(args.out, args.budget_s)
    stubbed = stub_podman_if_missing()
    import torch
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    dtype = getattr(torch, args.dtype or ("bfloat16" if device.startswith("cuda") else "float32"))
    sizes = override(QUICK if args.quick else Sizes(), args.set)
    if not device.startswith("cuda"):
        torch.set_num_threads(max(1, int(os.environ.get("OMP_NUM_THREADS", "0")) or os.cpu_count() or 1))
    work = Path(tempfile.mkdtemp(prefix="gpu-check-"))
    ctx = {"sizes": sizes, "device": device, "dtype": dtype, "report": report, "static": {}, "engine": None}
    try:
        report.run("env", env_section, device, dtype, sizes, stubbed)
        t0 = time.perf_counter()
        ctx["checkpoint"] = make_checkpoint(args.model_config, work / "model", dtype, sizes.layers)
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(ctx["checkpoint"])
        ctx["vocab"] = config.vocab_size
        env = report.results["sections"]["env"]
        env.update(layers=config.num_hidden_layers, checkpoint_s=round(time.perf_counter() - t0, 2))
        report.run("static", static_section, ctx)
        report.run("engine", engine_section, ctx)
        report.run("train", train_section, ctx)
        report.run("sharded", sharded_section, ctx)
        report.run("rollout", rollout_section, ctx)
    except Exception as exc:  # making the checkpoint failed: nothing else can run
        report.results["errors"]["setup"] = f"{type(exc).__name__}: {exc}"
        report.results["setup_traceback"] = traceback.format_exc()
        print(report.results["setup_traceback"], flush=True)
    finally:
        if ctx.get("engine") is not None:
            try:
                asyncio.run(asyncio.wait_for(ctx["engine"].close(), 30))
            except Exception as exc:
                report.results["errors"]["engine_close"] = f"{type(exc).__name__}: {exc}"
        shutil.rmtree(work, ignore_errors=True)
        report.save()
    print(summary(report.results), flush=True)
    if args.out:
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
