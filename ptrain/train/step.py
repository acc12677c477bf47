"""Inside one training step: an optimizer update, the statistics it measures, and the step's metrics row.

ptrain/train/loop.py's `Trainer.step` splits a step's groups into `updates_per_step` shares and
calls `update` on each; this file is what happens there, so that the loop itself reads top to
bottom. An update deals whole groups to ranks, runs micro-batches (logprobs of model tokens at each
episode's own temperature and top-p, the loss, backward), all-reduces the gradients (sum), clips
them and steps AdamW. The first update of a step also `measure`s the trainer-vs-behaviour mismatch
on the weights the step started with. `proximal_logprobs` (old policy "decoupled") and
`reference_logprobs` (the KL reference) are the two extra forward passes a step may need.
`metrics_row` turns the summed statistics into the row written to metrics/train.jsonl, and warns
loudly when a step cannot teach (most episodes truncated) or the logprobs contract is broken.

Under strategy fsdp every forward and backward is a collective, so each rank runs as many
micro-batches as the busiest one: a rank with fewer runs zero-weight `filler` micro-batches (two
pad tokens, a loss multiplied by zero) until the counts agree; FSDP2 reduce-scatters the gradients
as the backward passes run, so there is no all-reduce after them.

The functions take the `Trainer` for its parts (config, accelerator, model, optimizer, rank);
they keep no state of their own.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from typing import TYPE_CHECKING

import numpy as np
import torch

from ptrain.errors import PtrainError
from ptrain.train.batch import Selection, Sequence, Tensors, collate, deal, micro_batches, shared_prefix
from ptrain.train.config import TrainConfig
from ptrain.train.grpo import aggregate, mismatch, per_token_loss
from ptrain.train.model import rows_of, swapped
from ptrain.train.sharding import full

if TYPE_CHECKING:
    from ptrain.train.loop import Trainer

log = logging.getLogger("ptrain.train")


class TrainError(PtrainError):
    pass


def update(trainer: Trainer, groups: list[list[Sequence]], proximal: dict | None, sums: Counter, peaks: Counter,
           measure: bool) -> float:  # fmt: skip
    """One optimizer update on `groups` (dealt over ranks); adds its statistics to `sums`; the grad norm."""
    cfg, acc = trainer.cfg, trainer.acc
    mine = [s for g in deal(groups, trainer.world)[trainer.rank] for s in g]
    local = [sum(s.model_tokens for s in mine), len(mine), len({s.episode_id for s in mine})]
    for name, value in zip(("model_tokens", "sequences", "episodes"), local, strict=True):
        sums[name] += value  # summed over ranks with the rest: groups, hence episodes, are whole on a rank
    totals = all_reduce([local[0], local[2]], acc.device, trainer.world)
    total_tokens, total_episodes = float(totals[0]), float(totals[1])
    if total_tokens == 0:
        log.warning("train step %d: no model tokens in the batch; nothing to learn from", trainer.step_no + 1)
    share = sharing_prefix(trainer)
    for batch in balanced(trainer, micro_batches(mine, cfg.micro_batch_tokens, share)):
        t = collate(batch, trainer.pad_id, acc.device)
        prefix = shared_prefix(batch) if share else 0
        # the reference first: under --init it swaps weights in place, which must not touch the graph below
        ref = reference_logprobs(trainer, t, prefix) if cfg.kl_beta > 0 and cfg.algo == "grpo" else None
        with trainer.autocast():
            logprobs, entropy = trainer.score(t.input_ids, t.attention_mask, t.mask, prefix, t.temperature, t.top_p,
                                              with_entropy=True)  # fmt: skip
        if batch is FILLER:  # the same collectives as a real micro-batch, and no gradient
            (logprobs.sum() * 0.0).backward()
            continue
        if cfg.algo == "sft":
            loss = -(logprobs * t.mask).sum() / max(total_tokens, 1.0)
            stats = {}
        else:
            prox = rows_of(batch, proximal, t.logprobs) if proximal is not None else None
            per_token, stats = per_token_loss(logprobs, t.logprobs, t.advantages, t.mask, cfg.loss, ref, prox)
            loss = aggregate(per_token, t.mask, cfg.loss, total_tokens, total_episodes, t.episode_tokens)
        loss.backward()
        sums["loss"] += float(loss.detach())
        sums["padded_tokens"] += t.input_ids.numel()
        sums["computed_tokens"] += t.input_ids.numel() - (len(batch) - 1) * prefix
        sums["real_tokens"] += float(t.attention_mask.sum())
        for name, value in stats.items():
            sums[name] += float((value * t.mask).sum())
        if measure:
            measure_mismatch(logprobs, entropy, t, trainer.policy_version, sums, peaks)
    if not trainer.sharded:  # fsdp reduce-scattered them in the backward passes
        all_reduce_gradients(trainer.params, trainer.world)
    grad_norm = float(full(torch.nn.utils.clip_grad_norm_(trainer.params, cfg.max_grad_norm)))
    trainer.optimizer.step()
    if trainer.scheduler:
        trainer.scheduler.step()
    trainer.optimizer.zero_grad(set_to_none=True)
    return grad_norm


def measure_mismatch(logprobs: torch.Tensor, entropy: torch.Tensor, t: Tensors, policy_version: int, sums: Counter,
                     peaks: Counter) -> None:  # fmt: skip
    """The step's mismatch and entropy statistics from logprobs of the weights the step started with."""
    mask = t.mask.bool()
    m = mismatch(logprobs, t.logprobs, t.mask)
    on_policy = mask & (t.versions == policy_version)[:, None]
    sums["measured_tokens"] += float(mask.sum())
    sums["mismatch"] += float(m["abs_log_ratio"].sum())
    sums["log_ratio"] += float(m["log_ratio"].sum())
    sums["k3"] += float(m["k3"].sum())
    sums["entropy"] += float((entropy * t.mask).sum())
    sums["on_policy_tokens"] += float(on_policy.sum())
    sums["on_policy_mismatch"] += float(m["abs_log_ratio"][on_policy].sum())
    if mask.any():
        peaks["abs_log_ratio"] = max(peaks["abs_log_ratio"], float(m["abs_log_ratio"][mask].max()))


def proximal_logprobs(trainer: Trainer, updates: list[list[list[Sequence]]]) -> dict[int, torch.Tensor]:
    """The "decoupled" proximal policy: this rank's sequences' logprobs on the step's starting weights."""
    cfg, acc, model = trainer.cfg, trainer.acc, trainer.model
    mine = [s for part in updates for g in deal(part, trainer.world)[trainer.rank] for s in g]
    out: dict[int, torch.Tensor] = {}
    model.eval()
    share = sharing_prefix(trainer)
    with torch.no_grad():
        for batch in balanced(trainer, micro_batches(mine, cfg.micro_batch_tokens, share)):
            t = collate(batch, trainer.pad_id, acc.device)
            prefix = shared_prefix(batch) if share else 0
            with trainer.autocast():
                lp = trainer.score(t.input_ids, t.attention_mask, t.mask, prefix, t.temperature, t.top_p)
            out.update({id(s): lp[i, : len(s.token_ids)] for i, s in enumerate(batch) if batch is not FILLER})
    model.train()
    return out


def reference_logprobs(trainer: Trainer, t: Tensors, prefix: int = 0) -> torch.Tensor:
    """The KL reference: the policy training started from (the --init adapter, else the base model)."""
    model = trainer.model
    if trainer.reference is not None:
        context = swapped(trainer.params, trainer.reference)
    elif hasattr(model, "disable_adapter"):
        context = model.disable_adapter()  # a fresh LoRA adapter adds nothing: this is the start
    else:
        raise TrainError("kl_beta > 0 needs LoRA (the reference is the starting policy, kept as its adapter)")
    with torch.no_grad(), context, trainer.autocast():
        return trainer.score(t.input_ids, t.attention_mask, t.mask, prefix, t.temperature, t.top_p)


# -- micro-batches: the same number on every rank under fsdp ----------------------------------------

FILLER = [Sequence(np.zeros(2, np.int64), np.array([0.0, 1.0], np.float32), np.zeros(2, np.float32), 0.0, "", "")]


def sharing_prefix(trainer: Trainer) -> bool:
    """Whether micro-batches compute their shared prefix once: not under gradient checkpointing (which
    keeps no key/value cache) and not under fsdp (the prefix pass is a second round of collectives)."""
    return trainer.cfg.share_prefix and not trainer.cfg.gradient_checkpointing and not trainer.sharded


def balanced(trainer: Trainer, batches: list[list[Sequence]]) -> list[list[Sequence]]:
    """This rank's micro-batches, under fsdp followed by FILLERs up to the busiest rank's count."""
    if not trainer.sharded or trainer.world == 1:
        return batches
    (most,) = all_reduce([len(batches)], trainer.acc.device, trainer.world, op="max")
    return batches + [FILLER] * (int(most) - len(batches))


# -- across ranks ------------------------------------------------------------------------------------


def all_reduce_gradients(params: list[torch.nn.Parameter], world: int) -> None:
    """Sum the ranks' gradients in one flat all-reduce (a parameter without a gradient counts as zeros)."""
    if world == 1:
        return
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
    flat = torch.cat([g.reshape(-1) for g in grads])
    torch.distributed.all_reduce(flat, op=torch.distributed.ReduceOp.SUM)
    offset = 0
    for p, g in zip(params, grads, strict=True):
        p.grad = flat[offset : offset + g.numel()].view_as(p).clone()
        offset += g.numel()


def all_reduce(values: list[float], device: torch.device, world: int, op: str = "sum") -> list[float]:
    """`values` summed (or, with op="max", maxed) over the ranks."""
    tensor = torch.tensor(values, dtype=torch.float64, device=device)
    if world > 1:
        reduce_op = torch.distributed.ReduceOp.MAX if op == "max" else torch.distributed.ReduceOp.SUM
        torch.distributed.all_reduce(tensor, op=reduce_op)
    return tensor.tolist()


# -- the metrics row ---------------------------------------------------------------------------------


def metrics_row(cfg: TrainConfig, step_no: int, policy_version: int, sums, selections: list[Selection],
                updates: int, lr: float, seconds: float) -> dict:  # fmt: skip
    """The step's row of metrics/train.jsonl from the ranks' summed statistics; warns when it cannot teach."""
    episodes = sum(s.episodes for s in selections)
    rewards = [r for s in selections for r in s.rewards]
    dropped = sum((s.dropped for s in selections), Counter())
    tokens, measured = sums["model_tokens"], max(sums["measured_tokens"], 1)
    row = {
        "step": step_no, "policy_version": policy_version, "algo": cfg.algo,
        "loss": sums["loss"] / updates, "lr": lr, "grad_norm": sums["grad_norm"], "groups": int(sums["groups"]),
        "updates": updates, "sequences": int(sums["sequences"]), "episodes": int(sums["episodes"]),
        "model_tokens": int(tokens), "padded_tokens": int(sums["padded_tokens"]),
        "padding": 1 - sums["real_tokens"] / max(sums["padded_tokens"], 1),
        "computed_tokens": int(sums["computed_tokens"]),  # through the transformer: shared prefixes once
        "reward_mean": float(np.mean(rewards)) if rewards else None,
        "truncated": sum(s.truncated for s in selections) / max(episodes, 1),
        # trainer vs behaviour, on the step's starting weights: log pi_trainer - log pi_behaviour per token
        "mismatch": sums["mismatch"] / measured, "mismatch_max": sums.get("abs_log_ratio_max", 0.0),
        "log_ratio_mean": sums["log_ratio"] / measured, "mismatch_k3": sums["k3"] / measured,
        "on_policy_tokens": int(sums["on_policy_tokens"]),
        "on_policy_mismatch": sums["on_policy_mismatch"] / sums["on_policy_tokens"] if sums["on_policy_tokens"] else None,
        "entropy": sums["entropy"] / measured,
        "step_s": seconds, "tokens_per_s": sums["real_tokens"] / max(seconds, 1e-9),
        "dropped": dict(dropped), "time": time.time(),
    }  # fmt: skip
    for name in ("clipped", "capped", "ratio", "kl"):
        if name in sums:
            row[name] = sums[name] / max(tokens, 1)
    if row["truncated"] > 0.5:
        log.warning("train step %d: %.0f%% of episodes were truncated; raise max_turns or max_new_tokens "
                    "or the model learns mostly from cut-off attempts", step_no, 100 * row["truncated"])  # fmt: skip
    if cfg.algo == "grpo" and (row["on_policy_mismatch"] or 0) > cfg.mismatch_warn:
        log.warning("train step %d: CONTRACT BUG, not slow learning: on %d tokens sampled by this very policy "
                    "version the trainer's logprobs differ from the engine's by %.4f on average (max %.3f), more "
                    "than the dtype explains (mismatch_warn %.3g). Check that the engine returns the logprobs "
                    "it sampled from (vLLM: --logprobs-mode processed_logprobs), with the temperature and top-p "
                    "stored on the episodes, and the same weights as the trainer", step_no,
                    row["on_policy_tokens"], row["on_policy_mismatch"], row["mismatch_max"],
                    cfg.mismatch_warn)  # fmt: skip
    return row
