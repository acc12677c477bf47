"""GRPO as pure functions: group advantages and the clipped policy loss.

Nothing here knows about models, stores or processes; the training loop calls these inline and
the tests check them alone and against TRL's GRPOTrainer loss on the same batch.

Shapes: B sequences of T tokens (right-padded); `mask` is 1 on the model's own tokens, 0 on the
prompt, tool output and padding. Logprobs are of each token given the ones before it.

The old policy, three ways (`old_policy`):
- "behaviour" (the default): the engine's stored sampling logprobs. The ratio pi_theta / pi_behaviour
  carries both staleness and engine/trainer mismatch, the surrogate is clipped as usual, and the
  unclipped ratio is capped at `is_cap` (truncated importance sampling, TRL's `delta`), so a negative
  advantage on a token the trainer now finds far likelier cannot blow up. Use it on-policy (online
  training with engine and trainer in one dtype), where behaviour and trainer agree.
- "trainer": the trainer's own logprobs at the start of the update (`new.detach()`, ratio 1), each
  token's loss weighted by the truncated ratio pi_trainer / pi_behaviour (TRL's vLLM importance
  sampling correction). No trust region: one optimizer update per batch, which moves little.
- "decoupled" (AReaL's and verl's decoupled PPO): the proximal policy is the trainer's logprobs
  computed once at the start of the step, before any of its `updates_per_step` optimizer updates;
  the surrogate is clipped against it (a trust region per step, however stale the data), and each
  token is weighted by the truncated ratio pi_proximal / pi_behaviour (staleness and engine mismatch,
  corrected apart from the clip). Use it for offline runs over old data, or several updates a step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

ADVANTAGES = ("grpo", "drgrpo")
AGGREGATIONS = ("token", "sequence", "constant")
OLD_POLICIES = ("behaviour", "trainer", "decoupled")
RATIO_LEVELS = ("token", "sequence")


def group_advantages(rewards: np.ndarray, kind: str = "grpo", eps: float = 1e-4) -> np.ndarray:
    """Advantages of one group's samples: reward minus the group mean, over the std for "grpo".

    GRPO standardises within the group; Dr. GRPO ("drgrpo") only centres, which removes the bias
    toward groups with a small spread. A group whose rewards are all equal gets zeros (no signal).
    """
    if kind not in ADVANTAGES:
        raise ValueError(f"advantage kind {kind!r} is not one of {ADVANTAGES}")
    rewards = np.asarray(rewards, dtype=np.float64)
    centred = rewards - rewards.mean()
    if kind == "drgrpo":
        return centred
    return centred / (rewards.std(ddof=1) + eps) if len(rewards) > 1 else centred


def is_flat(rewards: np.ndarray, tol: float = 1e-9) -> bool:
    """True when every sample of a group got the same reward: the group carries no learning signal."""
    rewards = np.asarray(rewards, dtype=np.float64)
    return bool(np.ptp(rewards) <= tol) if len(rewards) else True


@dataclass(frozen=True)
class LossConfig:
    clip_low: float = 0.2  # the ratio may fall to 1 - clip_low ...
    clip_high: float = 0.28  # ... and rise to 1 + clip_high (DAPO's asymmetric "clip higher")
    aggregation: str = "token"  # token mean over the batch; "sequence": mean of per-sequence means
    old_policy: str = "behaviour"
    is_cap: float = 2.0  # truncated importance sampling: the cap on the behaviour ratio
    ratio_level: str = "token"  # "sequence": GSPO's length-normalised sequence ratio
    kl_beta: float = 0.0  # > 0 adds beta * KL(pi_theta || pi_ref), k3 estimator
    max_tokens: int = 0  # "constant" aggregation (Dr. GRPO) divides by sequences * max_tokens

    def __post_init__(self) -> None:
        for name, value, allowed in (
            ("aggregation", self.aggregation, AGGREGATIONS),
            ("old_policy", self.old_policy, OLD_POLICIES),
            ("ratio_level", self.ratio_level, RATIO_LEVELS),
        ):
            if value not in allowed:
                raise ValueError(f"{name} {value!r} is not one of {allowed}")
        if not (0 <= self.clip_low < 1 and self.clip_high >= 0 and self.is_cap >= 1 and self.kl_beta >= 0):
            raise ValueError(f"bad loss settings: {self}")
        if self.aggregation == "constant" and self.max_tokens <= 0:
            raise ValueError('aggregation "constant" needs max_tokens > 0')


def per_token_loss(
    logprobs: torch.Tensor,
    behaviour_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    cfg: LossConfig,
    ref_logprobs: torch.Tensor | None = None,
    proximal_logprobs: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The clipped surrogate for every token, (B, T), before aggregation; and per-token statistics.

    `advantages` is one value per sequence (B,). `proximal_logprobs` is the "decoupled" mode's
    proximal policy (the trainer's logprobs at the start of the step). Statistics are tensors the
    caller aggregates over model tokens: clipped (1 where the clip was active), capped (1 where the
    truncated importance ratio hit `is_cap`), ratio, and kl when it is computed.
    """
    mask = mask.to(logprobs.dtype)
    # outside the mask the behaviour logprobs mean nothing (0, NaN, -inf): make them harmless there
    behaviour_logprobs = torch.where(mask.bool(), behaviour_logprobs, logprobs.detach()).nan_to_num(nan=0.0)
    adv = advantages.to(logprobs.dtype).unsqueeze(1)
    if cfg.old_policy == "decoupled":
        if proximal_logprobs is None:
            raise ValueError('old_policy "decoupled" needs the proximal policy\'s logprobs')
        old = torch.where(mask.bool(), proximal_logprobs, logprobs.detach())
    else:
        old = behaviour_logprobs if cfg.old_policy == "behaviour" else logprobs.detach()
    log_ratio = (logprobs - old) * mask
    if cfg.ratio_level == "sequence":
        log_ratio = (log_ratio.sum(1, keepdim=True) / mask.sum(1, keepdim=True).clamp(min=1)).expand_as(logprobs)
    ratio = torch.exp(log_ratio)
    clipped_ratio = torch.clamp(ratio, 1 - cfg.clip_low, 1 + cfg.clip_high)
    if cfg.old_policy == "behaviour":
        capped = (ratio.detach() > cfg.is_cap).to(logprobs.dtype)
        ratio = torch.clamp(ratio, max=cfg.is_cap)
    loss = -torch.minimum(ratio * adv, clipped_ratio * adv)
    if cfg.old_policy != "behaviour":
        weight = torch.exp(old.detach() - behaviour_logprobs)
        capped = (weight > cfg.is_cap).to(logprobs.dtype)
        loss = loss * torch.clamp(weight, max=cfg.is_cap)
    stats = {"clipped": ((ratio * adv) > (clipped_ratio * adv)).to(logprobs.dtype), "capped": capped,
             "ratio": ratio.detach()}  # fmt: skip
    if cfg.kl_beta > 0:
        if ref_logprobs is None:
            raise ValueError("kl_beta > 0 needs the reference model's logprobs")
        kl = torch.exp(ref_logprobs - logprobs) - (ref_logprobs - logprobs) - 1
        loss = loss + cfg.kl_beta * kl
        stats["kl"] = kl.detach()
    return loss * mask, stats


def mismatch(logprobs: torch.Tensor, behaviour_logprobs: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
    """How far the trainer's logprobs are from the stored behaviour ones, per model token (detached).

    log_ratio = log pi_trainer - log pi_behaviour; k3 = r - 1 - log r with r = exp(log_ratio), the
    unbiased, non-negative estimate of KL(behaviour || trainer) from tokens the behaviour policy drew
    (Schulman's k3). Zeros off the mask. A contract bug (a temperature not applied, raw logprobs)
    shows here first: on-policy tokens in one dtype agree to rounding."""
    mask = mask.bool()
    log_ratio = torch.where(mask, logprobs.detach() - behaviour_logprobs.nan_to_num(nan=0.0), 0.0)
    return {"log_ratio": log_ratio, "abs_log_ratio": log_ratio.abs(), "k3": torch.expm1(log_ratio) - log_ratio}


def aggregate(
    loss: torch.Tensor,
    mask: torch.Tensor,
    cfg: LossConfig,
    total_tokens: float,
    total_seqs: float,
    episode_tokens: torch.Tensor | None = None,
):
    """Sum this micro-batch's share of the step loss.

    The totals are over the whole optimizer step (all micro-batches on all ranks), so summing the
    returned values over micro-batches and ranks gives exactly the batch loss: a token mean over
    every model token ("token"), a mean of per-episode token means ("sequence"), or Dr. GRPO's sum
    over episodes * max_tokens ("constant"). An episode compacted into several segments is several
    rows: `episode_tokens` (B,) is each row's whole episode's model tokens, and `total_seqs` counts
    episodes, so each episode counts once (None: each row is an episode of its own).
    """
    if cfg.aggregation == "token":
        return loss.sum() / max(total_tokens, 1.0)
    if cfg.aggregation == "sequence":
        per_row = mask.sum(1) if episode_tokens is None else episode_tokens
        per_seq = loss.sum(1) / per_row.clamp(min=1).to(loss.dtype)
        return per_seq.sum() / max(total_seqs, 1.0)
    return loss.sum() / (max(total_seqs, 1.0) * cfg.max_tokens)


def token_logprobs(logits: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    """log p(token_t | tokens_<t) for t >= 1, with 0 at t = 0, shape (B, T); logits are (B, T, V).

    Computed row by row through logsumexp so a long sequence never holds a second (T, V) float32 copy.
    """
    out = torch.zeros(input_ids.shape, dtype=torch.float32, device=logits.device)
    targets = input_ids[:, 1:]
    for b in range(logits.shape[0]):
        row = logits[b, :-1].float()
        out[b, 1:] = row.gather(-1, targets[b].unsqueeze(-1)).squeeze(-1) - torch.logsumexp(row, dim=-1)
    return out
