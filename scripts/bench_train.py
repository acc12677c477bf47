"""Benchmark: tokens/s and peak RSS of ptrain's training loop against TRL's GRPOTrainer, in one run.

Target: ptrain at >= 1.5x TRL's throughput at equal loss.

Both trainers are fed the same stored groups (TRL through `ptrain.train.trl_backend`, which takes ptrain's
selection and step order), with the same model (SmolLM2-135M), the same LoRA (rank 16, all linear layers), the
same loss (token aggregation = TRL's "dapo", behaviour logprobs as the old policy, the same clip and cap), the
same learning rate and groups per step, and the same number of torch threads. Each runs in a fresh process of its
own, so its peak RSS is its own (ru_maxrss of that process: model, optimizer, activations). ptrain runs twice:
as configured by default (a micro-batch's shared prefix, the group's prompt, computed once) and with
`share_prefix = false`, which shows how much of the gain is that and how much the rest.

The store is synthetic but shaped like a multi-turn agent rollout: a prompt of 150-300 tokens shared by a group's
samples, then 2-4 model turns of 30-80 tokens separated by tool outputs of 50-200 tokens; the text is real Python
(this interpreter's stdlib) through the real tokenizer, the loss mask is on the model's turns only, the behaviour
logprobs are the model's own (computed once, with `masked_logprobs`), and rewards vary within each group.

"At equal loss": both trainers take the same groups at step 1, from the same weights (the LoRA B matrices start at
zero), so their first-step losses must agree to ~1e-4; the script checks and prints it. Throughput counts only the
optimizer steps (the step's wall time: ptrain's `step`, TRL's on_step_begin -> on_step_end, rollout_func and
reward included), not loading or checkpointing; "model tokens" are the masked ones, "total" every real token.

    python scripts/bench_train.py                       # 2 steps of 1 group of 4 samples, 1 thread (~10 minutes)
    python scripts/bench_train.py --steps 3 --groups 2 --threads 2 --out bench_train.json

`--sharding` measures the training strategies instead, on the same kind of store: full fine-tuning of
SmolLM2-135M under `ddp` and `fsdp`, with one process and with two (torchrun, gloo), each in fresh
processes. Per rank it reports the bytes this rank holds of the parameters, of the gradients (just
before the optimizer step) and of the optimizer state (after it), the peak RSS, tokens/s and the step
losses; the targets are fsdp's parameter + optimizer bytes per rank with two processes at most 0.55x
ddp's, and the same losses in every configuration.

    python scripts/bench_train.py --sharding --steps 2 --groups 2 --out bench_sharding.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import numpy as np

TRAINERS = ("ptrain", "ptrain-unshared", "trl")  # ptrain-unshared: share_prefix off, each row's prompt run again
SHARDINGS = (("ddp", 1), ("fsdp", 1), ("ddp", 2), ("fsdp", 2))  # (strategy, processes), full fine-tuning


def corpus_tokens(tokenizer, max_chars: int = 400_000) -> np.ndarray:
    """Real code as real tokens: the first stdlib modules, tokenized once."""
    texts, size = [], 0
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        texts.append(path.read_text(encoding="utf-8", errors="replace"))
        size += len(texts[-1])
        if size > max_chars:
            break
    return np.array(tokenizer.encode("".join(texts), add_special_tokens=False), np.int32)


def build_store(path: Path, steps: int, groups: int, samples: int, seed: int) -> dict:
    """steps x groups groups of `samples` multi-turn episodes, behaviour logprobs from the model itself."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from ptrain.engine.models import DEFAULT_MODEL, resolve_model
    from ptrain.episode import Episode, StoredVerdict
    from ptrain.store import Store
    from ptrain.train.model import masked_logprobs

    model_path = resolve_model(DEFAULT_MODEL)
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32).eval()
    corpus = corpus_tokens(tokenizer)
    rng = np.random.default_rng(seed)
    enc = lambda text: np.array(tokenizer.encode(text, add_special_tokens=False), np.int32)  # noqa: E731
    piece = lambda n: corpus[(s := int(rng.integers(0, len(corpus) - n))) : s + n]  # noqa: E731
    head = enc("<|im_start|>system\nYou are a careful engineer. Fix the task.<|im_end|>\n<|im_start|>user\n")
    ask, tool_open = enc("<|im_end|>\n<|im_start|>assistant\n"), enc("<|im_start|>tool\n")
    end = enc("<|im_end|>\n")
    store = Store(path, create=True)
    totals = {"episodes": 0, "tokens": 0, "model_tokens": 0}
    with store.writer() as writer:
        for task in range(steps * groups):
            prompt = np.concatenate([head, piece(int(rng.integers(150, 300)) - len(head) - len(ask)), ask])
            rewards = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], samples)
            rewards[:2] = [0.0, 1.0]  # never a flat group
            for sample in range(samples):
                parts, masks = [prompt], [np.zeros(len(prompt), bool)]
                turns = int(rng.integers(2, 5))
                for turn in range(turns):
                    said = np.concatenate([piece(int(rng.integers(30, 80)) - len(end)), end])
                    parts.append(said)
                    masks.append(np.ones(len(said), bool))
                    if turn < turns - 1:
                        out = np.concatenate([tool_open, piece(int(rng.integers(50, 200))), end, ask])
                        parts.append(out)
                        masks.append(np.zeros(len(out), bool))
                ids, mask = np.concatenate(parts), np.concatenate(masks)
                with torch.no_grad():
                    t = torch.from_numpy(ids).long().unsqueeze(0)
                    lp = masked_logprobs(model, t, torch.ones_like(t), torch.from_numpy(mask).long().unsqueeze(0))[0]
                episode = Episode(run="bench", taskpack="bench", task_id=f"task-{task}", split="train",
                                  group_id=f"task-{task}@0", sample_index=sample, group_size=samples,
                                  token_ids=ids, loss_mask=mask, logprobs=lp.numpy(), model="SmolLM2-135M-Instruct")  # fmt: skip
                writer.add(episode)
                writer.add_verdict(StoredVerdict(episode_id=episode.episode_id, reward=float(rewards[sample]),
                                                 passed=bool(rewards[sample] == 1.0)))  # fmt: skip
                totals["episodes"] += 1
                totals["tokens"] += len(ids)
                totals["model_tokens"] += int(mask.sum())
    return totals


def child(trainer: str, run: Path, settings: dict, out: Path) -> None:
    """One trainer, in this fresh process: train, then write its rows, peak RSS and CPU time to `out`."""
    import logging

    import torch

    torch.set_num_threads(settings.pop("threads"))
    logging.basicConfig(format=f"{trainer}: %(message)s")
    logging.getLogger("ptrain").setLevel(logging.INFO)
    from ptrain.store import Store
    from ptrain.train.config import TrainConfig

    cfg = TrainConfig(trainer=trainer.split("-")[0], share_prefix=trainer != "ptrain-unshared", **settings)
    started, cpu = time.monotonic(), time.process_time()
    if trainer == "trl":
        from ptrain.train.trl_backend import train_with_trl

        rows = train_with_trl(run, Store(run), cfg)
        for row in rows:
            row["real_tokens"] = row["tokens"]
    else:
        from ptrain.train.loop import Trainer

        step = Trainer.step

        def timed(self, *args, **kwargs):  # the step's CPU time too, as trl_backend's rows carry it
            cpu = time.process_time()
            row = step(self, *args, **kwargs)
            return {**row, "step_cpu_s": time.process_time() - cpu}

        Trainer.step = timed
        rows = Trainer(cfg, run).train(Store(run))
        for row in rows:
            row["real_tokens"] = round(row["tokens_per_s"] * row["step_s"])
    usage = resource.getrusage(resource.RUSAGE_SELF)
    result = {"trainer": trainer, "rows": rows, "wall_s": time.monotonic() - started,
              "cpu_s": time.process_time() - cpu, "peak_rss_mb": usage.ru_maxrss / 1024}  # fmt: skip
    out.write_text(json.dumps(result, default=str))


def sharding_child(run: Path, settings: dict, out: Path) -> None:
    """Full fine-tuning under one strategy, in this process (one rank of torchrun's, or alone): train, then
    write this rank's bytes of parameters, gradients and optimizer state, its peak RSS and the rows."""
    import torch

    torch.set_num_threads(settings.pop("threads"))
    from transformers.utils import logging as hf_logging

    from ptrain.store import Store
    from ptrain.train.config import TrainConfig
    from ptrain.train.loop import Trainer
    from ptrain.train.sharding import local

    hf_logging.disable_progress_bar()

    def nbytes(tensors) -> int:
        return sum(local(t).numel() * local(t).element_size() for t in tensors if t is not None)

    trainer = Trainer(TrainConfig(trainer="ptrain", lora=False, **settings), run)
    memory = {"params_mb": nbytes(trainer.params) / 2**20}
    optimizer = getattr(trainer.optimizer, "optimizer", trainer.optimizer)  # under accelerate's wrapper

    def before_step(opt, args, kwargs) -> None:
        memory["grads_mb"] = nbytes(p.grad for p in trainer.params) / 2**20

    def after_step(opt, args, kwargs) -> None:
        states = [v for state in opt.state.values() for v in state.values() if torch.is_tensor(v)]
        memory["optimizer_mb"] = nbytes(states) / 2**20

    optimizer.register_step_pre_hook(before_step)
    optimizer.register_step_post_hook(after_step)
    rows = trainer.train(Store(run))
    for row in rows:
        row["real_tokens"] = round(row["tokens_per_s"] * row["step_s"])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = {"rank": trainer.rank, "world": trainer.world, "rows": rows, **memory, "peak_rss_mb": peak}
    out.with_name(f"{out.stem}-rank{trainer.rank}.json").write_text(json.dumps(result, default=str))


def run_shardings(work: Path, settings: dict, env: dict) -> dict:
    """Every (strategy, processes) of SHARDINGS on a fresh copy of the store; rank 0's figures and each rank's memory."""
    results = {}
    for strategy, processes in SHARDINGS:
        name = f"{strategy}-{processes}"
        run = work / name
        shutil.copytree(work / "store", run)
        out = work / f"{name}.json"
        launcher = [sys.executable] if processes == 1 else [
            sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={processes}"]  # fmt: skip
        child_settings = {**settings, "strategy": strategy}
        subprocess.run([*launcher, __file__, "--child", "sharding", "--run-dir", str(run), "--out", str(out),
                        "--settings", json.dumps(child_settings)], env=env, check=True)  # fmt: skip
        ranks = [json.loads(out.with_name(f"{name}-rank{r}.json").read_text()) for r in range(processes)]
        rows = ranks[0]["rows"]
        seconds = sum(r["step_s"] for r in rows)
        results[name] = {
            "strategy": strategy, "processes": processes, "steps": len(rows),
            "tokens_per_s": sum(r["real_tokens"] for r in rows) / seconds,
            "losses": [r["loss"] for r in rows],
            **{key: max(r[key] for r in ranks) for key in ("params_mb", "grads_mb", "optimizer_mb", "peak_rss_mb")},
        }  # fmt: skip
    return results


def print_shardings(results: dict) -> dict:
    head = f"{'strategy':<8} {'procs':>5} {'params MB':>9} {'grads MB':>9} {'optim MB':>9} {'peak RSS MB':>11} {'tok/s':>7}"
    print(f"\n{head}  losses (per rank: the largest)")
    for r in results.values():
        print(f"{r['strategy']:<8} {r['processes']:>5} {r['params_mb']:>9.0f} {r['grads_mb']:>9.0f} "
              f"{r['optimizer_mb']:>9.0f} {r['peak_rss_mb']:>11.0f} {r['tokens_per_s']:>7.1f}  "
              + ", ".join(f"{x:.6f}" for x in r["losses"]))  # fmt: skip
    ddp, fsdp = results["ddp-2"], results["fsdp-2"]
    ratio = (fsdp["params_mb"] + fsdp["optimizer_mb"]) / (ddp["params_mb"] + ddp["optimizer_mb"])
    gap = max(
        abs(a - b) for r in results.values() for a, b in zip(r["losses"], results["ddp-1"]["losses"], strict=True)
    )
    speed = fsdp["tokens_per_s"] / ddp["tokens_per_s"]
    print(f"\nfsdp / ddp, 2 processes: parameters + optimizer state per rank {ratio:.2f}x (target <= 0.55x: "
          f"{'met' if ratio <= 0.55 else 'NOT met'}), tokens/s {speed:.2f}x")  # fmt: skip
    print(f"largest step-loss difference from ddp with 1 process: {gap:.2e}")
    return {"memory_ratio": ratio, "speed_ratio": speed, "loss_gap": gap}


def summarise(result: dict) -> dict:
    rows = result["rows"]
    seconds, cpu = sum(r["step_s"] for r in rows), sum(r["step_cpu_s"] for r in rows)
    tokens, model_tokens = sum(r["real_tokens"] for r in rows), sum(r["model_tokens"] for r in rows)
    return {"trainer": result["trainer"], "steps": len(rows), "step_s": seconds, "step_cpu_s": cpu, "tokens": tokens,
            "model_tokens": model_tokens, "tokens_per_s": tokens / seconds, "model_tokens_per_s": model_tokens / seconds,
            "tokens_per_cpu_s": tokens / cpu, "peak_rss_mb": result["peak_rss_mb"], "losses": [r["loss"] for r in rows]}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2, help="optimizer steps per trainer")
    parser.add_argument("--groups", type=int, default=1, help="groups per optimizer step")
    parser.add_argument("--samples", type=int, default=4, help="samples per group")
    parser.add_argument("--threads", type=int, default=1, help="torch threads in each trainer's process (on a "
                        "small CPU shared with other work, 2 threads that wait on each other run several times slower)")  # fmt: skip
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="write every figure and each step's row here (JSON)")
    parser.add_argument("--sharding", action="store_true", help="full fine-tuning under ddp and fsdp, 1 and 2 "
                        "processes: memory per rank, tokens/s, losses (instead of ptrain vs TRL)")  # fmt: skip
    parser.add_argument("--child", choices=(*TRAINERS, "sharding"), help=argparse.SUPPRESS)
    parser.add_argument("--run-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--settings", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "sharding":
        sharding_child(args.run_dir, json.loads(args.settings), args.out)
        return
    if args.child:
        child(args.child, args.run_dir, json.loads(args.settings), args.out)
        return

    import torch

    torch.set_num_threads(args.threads)
    work = Path(tempfile.mkdtemp(prefix="bench-train-"))
    try:
        started = time.monotonic()
        totals = build_store(work / "store", args.steps, args.groups, args.samples, args.seed)
        print(f"store: {args.steps * args.groups} groups of {args.samples}, {totals['episodes']} episodes, "
              f"{totals['tokens']} tokens ({totals['model_tokens']} model), built in {time.monotonic() - started:.0f}s",
              flush=True)  # fmt: skip
        settings = {"threads": args.threads, "groups_per_step": args.groups, "max_steps": args.steps, "lr": args.lr,
                    "lora_rank": 16, "lora_alpha": 32, "lora_targets": "all-linear", "aggregation": "token",
                    "old_policy": "behaviour", "seed": args.seed, "device": "cpu", "tensorboard": False,
                    "save_every": 1000}  # fmt: skip
        env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "TRL_EXPERIMENTAL_SILENCE": "1"}
        if args.sharding:
            full = {k: v for k, v in settings.items() if not k.startswith("lora")}
            full["lr"] = args.lr / 10  # full fine-tuning's default scale
            results = run_shardings(work, full, env)
            summary = print_shardings(results)
            if args.out:
                args.out.write_text(json.dumps({"settings": full, "store": totals, "results": results, **summary},
                                               indent=1))  # fmt: skip
                print(f"wrote {args.out}")
            return
        results = {}
        for trainer in TRAINERS:
            run = work / trainer
            shutil.copytree(work / "store", run)  # a fresh run each: neither resumes the other's checkpoints
            out = work / f"{trainer}.json"
            command = [sys.executable, __file__, "--child", trainer, "--run-dir", str(run), "--out", str(out),
                       "--settings", json.dumps(settings)]  # fmt: skip
            subprocess.run(command, env=env, check=True)
            results[trainer] = summarise(json.loads(out.read_text()))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    ours, theirs = results["ptrain"], results["trl"]
    head = f"{'trainer':<15} {'steps':>5} {'model tok/s':>11} {'total tok/s':>11} {'tok/CPU-s':>9} {'peak RSS MB':>11}"
    print(f"\n{head} {'step-1 loss':>12}")
    for r in results.values():
        print(f"{r['trainer']:<15} {r['steps']:>5} {r['model_tokens_per_s']:>11.1f} {r['tokens_per_s']:>11.1f} "
              f"{r['tokens_per_cpu_s']:>9.1f} {r['peak_rss_mb']:>11.0f} {r['losses'][0]:>12.6f}")  # fmt: skip
    ratio = ours["tokens_per_s"] / theirs["tokens_per_s"]
    cpu_ratio = ours["tokens_per_cpu_s"] / theirs["tokens_per_cpu_s"]
    gap = abs(ours["losses"][0] - theirs["losses"][0])
    print(f"\nptrain / TRL throughput: {ratio:.2f}x wall, {cpu_ratio:.2f}x per CPU-second "
          f"(target >= 1.5x: {'met' if ratio >= 1.5 else 'NOT met'})")  # fmt: skip
    unshared = results["ptrain-unshared"]["tokens_per_s"] / theirs["tokens_per_s"]
    print(f"without the shared prefix (every row runs its prompt): {unshared:.2f}x wall")
    print(f"step-1 loss |ptrain - TRL| = {gap:.2e} ({'equal' if gap <= 1e-4 else 'NOT equal'} within 1e-4)")
    print(
        "losses by step: "
        + "; ".join(f"{r['trainer']} " + ", ".join(f"{x:.6f}" for x in r["losses"]) for r in results.values())
    )
    if args.out:
        report = {"settings": {**settings, "samples": args.samples}, "store": totals, "results": results,
                  "ratio": ratio, "cpu_ratio": cpu_ratio, "unshared_ratio": unshared, "step1_loss_gap": gap}  # fmt: skip
        args.out.write_text(json.dumps(report, indent=1))
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
