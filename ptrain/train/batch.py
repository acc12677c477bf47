"""From stored groups to padded micro-batches: which episodes train, with what advantage, on which rank.

A step takes whole groups. Each trainable episode becomes one sequence per segment (an episode
whose history was compacted has several, each its own context) carrying the group's advantage for
that episode. Groups are dealt to ranks whole, largest first to the rank with the fewest tokens, so
no group is split and ranks carry similar work. On each rank, sequences are cut into micro-batches
under a token budget: sorted by length so little compute goes to padding, or (`share_prefix`) kept
by group so the prompt a group's rows share is computed once (ptrain/train/model.py).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import torch

from ptrain.engine.sampling import transform
from ptrain.episode import Episode, Group
from ptrain.train.grpo import group_advantages, is_flat


@dataclass(frozen=True)
class Sequence:
    """One training sequence: a segment of an episode, with the episode's advantage (GRPO) or 1 (SFT).

    `temperature` and `top_p` are those the episode was sampled with (as `processed_logprobs` takes
    them: greedy scores as T = 1), so the trainer scores its tokens under the same distribution.
    `episode_tokens` is the model tokens of the whole episode, over all its segments, so that an
    episode counts once in per-sequence aggregation however many segments it has."""

    token_ids: np.ndarray
    mask: np.ndarray
    logprobs: np.ndarray
    advantage: float
    group_id: str
    episode_id: str
    temperature: float = 1.0
    top_p: float = 1.0
    episode_tokens: int = 0  # 0: this sequence's own model tokens (an episode of one segment)
    policy_version: int = 0

    @property
    def model_tokens(self) -> int:
        return int(self.mask.sum())


@dataclass
class Selection:
    """What a set of groups yields for training, and why the rest was left out (counted, for the log)."""

    groups: list[list[Sequence]] = field(default_factory=list)  # trainable groups, each a list of sequences
    dropped: Counter = field(default_factory=Counter)  # reason -> groups (or episodes) left out
    episodes: int = 0
    truncated: int = 0
    rewards: list[float] = field(default_factory=list)


def trainable(episode: Episode) -> bool:
    """Infrastructure failures are not the model's doing and are never trained on."""
    return episode.status != "error" and episode.metadata.get("trainable", True) and episode.model_tokens > 0


def segments_of(episode: Episode, advantage: float) -> list[Sequence]:
    """The episode's segments as sequences; a segment without model tokens is left out."""
    starts = list(episode.metadata.get("segments") or [0])
    ends = starts[1:] + [episode.num_tokens]
    temperature, top_p = transform(float(episode.metadata.get("temperature", 1.0)),
                                   float(episode.metadata.get("top_p", 1.0)))  # fmt: skip
    out = []
    for start, end in zip(starts, ends, strict=True):
        mask = episode.loss_mask[start:end]
        if mask.any():
            out.append(Sequence(episode.token_ids[start:end], mask, episode.logprobs[start:end], advantage,
                                episode.group_id, episode.episode_id, temperature, top_p, episode.model_tokens,
                                episode.policy_version))  # fmt: skip
    return out


def select_grpo(
    groups: list[Group], advantage: str = "grpo", min_version: int | None = None, mask_truncated: bool = False
) -> Selection:
    """GRPO sequences of the given groups; flat, unverified and stale groups are dropped and counted.

    `mask_truncated` (DAPO's overlong filtering): a truncated episode's reward still counts in its
    group's advantages, but its tokens are left out of the loss, so a cut-off attempt is neither
    rewarded nor punished for where it was cut."""
    sel = Selection()
    for group in groups:
        keep = [(e, v) for e, v in zip(group.episodes, group.verdicts, strict=True) if trainable(e)]
        sel.episodes += len(group.episodes)
        sel.truncated += sum(e.status == "truncated" for e in group.episodes)
        if len(keep) < len(group.episodes):
            sel.dropped["untrainable episodes"] += len(group.episodes) - len(keep)
        if any(v is None for _, v in keep):
            sel.dropped["unverified groups"] += 1
            continue
        if min_version is not None and min(e.policy_version for e, _ in keep) < min_version:
            sel.dropped["stale groups"] += 1
            continue
        if len(keep) < 2:
            sel.dropped["groups with fewer than 2 trainable episodes"] += 1
            continue
        rewards = np.array([v.reward for _, v in keep])
        sel.rewards.extend(rewards.tolist())
        if is_flat(rewards):
            sel.dropped["flat groups (all rewards equal)"] += 1
            continue
        advantages = group_advantages(rewards, advantage)
        masked = [mask_truncated and e.status == "truncated" for e, _ in keep]
        if any(masked):
            sel.dropped["truncated episodes masked out of the loss"] += sum(masked)
        seqs = [s for (e, _), a, out in zip(keep, advantages, masked, strict=True) if not out
                for s in segments_of(e, float(a))]  # fmt: skip
        if seqs:
            sel.groups.append(seqs)
        else:
            sel.dropped["groups whose every episode was truncated (masked)"] += 1
    return sel


def select_sft(episodes: list[Episode]) -> Selection:
    """SFT sequences: every segment of each given episode with advantage 1 (the loss is plain NLL)."""
    sel = Selection()
    for episode in episodes:
        sel.episodes += 1
        if trainable(episode):
            sel.groups.append(segments_of(episode, 1.0))
        else:
            sel.dropped["untrainable episodes"] += 1
    return sel


def deal(groups: list[list[Sequence]], world_size: int) -> list[list[list[Sequence]]]:
    """Whole groups to ranks: largest first, each to the rank with the fewest tokens so far (ties: lowest rank)."""
    ranks: list[list[list[Sequence]]] = [[] for _ in range(world_size)]
    load = [0] * world_size
    sizes = [sum(len(s.token_ids) for s in g) for g in groups]
    for i in sorted(range(len(groups)), key=lambda i: (-sizes[i], i)):
        rank = min(range(world_size), key=lambda r: (load[r], r))
        ranks[rank].append(groups[i])
        load[rank] += sizes[i]
    return ranks


MIN_SHARED_PREFIX = 16  # tokens: a shorter common prefix is not worth a separate forward pass


def shared_prefix(batch: list[Sequence]) -> int:
    """How many leading tokens every sequence of the batch shares and can compute once.

    The common prefix, stopping one token before the earliest model token (whose logprob needs
    the position before it inside each row); 0 for a single row or a prefix under MIN_SHARED_PREFIX."""
    if len(batch) < 2:
        return 0
    limit = min(min(len(s.token_ids) for s in batch), min(int(np.argmax(s.mask)) for s in batch)) - 1
    if limit < MIN_SHARED_PREFIX or not all(s.mask.any() for s in batch):
        return 0
    first = batch[0].token_ids[:limit]
    n = limit
    for s in batch[1:]:
        differs = np.nonzero(s.token_ids[:n] != first[:n])[0]
        n = int(differs[0]) if len(differs) else n
    return n if n >= MIN_SHARED_PREFIX else 0


def micro_batches(sequences: list[Sequence], max_tokens: int, share_prefix: bool = False) -> list[list[Sequence]]:
    """Sequences cut into micro-batches within a token budget; every sequence in exactly one.

    Without `share_prefix`: sorted longest first, rows x longest row within `max_tokens`. With it:
    a group's sequences kept together (they share the prompt) and the budget counts the shared
    prefix once: prefix + rows x (longest row - prefix); the next group joins a micro-batch only
    if that costs no more than a micro-batch of its own (joining loses the shared prefix, so with
    a large budget it seldom does). A sequence over the budget goes alone."""
    if share_prefix:
        order = sorted(sequences, key=lambda s: (s.group_id, -len(s.token_ids), s.episode_id))
    else:
        order = sorted(sequences, key=lambda s: (-len(s.token_ids), s.episode_id))
    batches: list[list[Sequence]] = []
    for seq in order:
        current = batches[-1] if batches else None
        joined = cost(current + [seq], share_prefix) if current else max_tokens + 1
        if share_prefix and current and seq.group_id != current[-1].group_id:
            joined = joined if joined <= cost(current, True) + len(seq.token_ids) else max_tokens + 1
        if joined <= max_tokens:
            current.append(seq)
        else:
            batches.append([seq])
    return batches


def cost(batch: list[Sequence], share_prefix: bool) -> int:
    """Tokens a micro-batch runs through the transformer (padding included)."""
    longest = max(len(s.token_ids) for s in batch)
    prefix = shared_prefix(batch) if share_prefix else 0
    return prefix + len(batch) * (longest - prefix)


@dataclass
class Tensors:
    input_ids: torch.Tensor  # (B, T) right-padded
    attention_mask: torch.Tensor
    mask: torch.Tensor  # 1 on model tokens
    logprobs: torch.Tensor  # behaviour logprobs, float32
    advantages: torch.Tensor  # (B,)
    temperature: torch.Tensor  # (B,) each row's sampling temperature
    top_p: torch.Tensor | None  # (B,), or None when no row was sampled under top-p
    episode_tokens: torch.Tensor  # (B,) model tokens of each row's whole episode
    versions: torch.Tensor  # (B,) the policy version each row was sampled with

    @property
    def padding(self) -> float:
        return 1.0 - float(self.attention_mask.float().mean())


def collate(batch: list[Sequence], pad_id: int, device: torch.device | str = "cpu") -> Tensors:
    width = max(len(s.token_ids) for s in batch)
    ids = np.full((len(batch), width), pad_id, np.int64)
    attn = np.zeros((len(batch), width), np.int64)
    mask = np.zeros((len(batch), width), np.float32)
    lps = np.zeros((len(batch), width), np.float32)
    for i, s in enumerate(batch):
        n = len(s.token_ids)
        ids[i, :n], attn[i, :n], mask[i, :n], lps[i, :n] = s.token_ids, 1, s.mask, s.logprobs
    t = [torch.from_numpy(a).to(device) for a in (ids, attn, mask, lps)]

    def column(values, dtype=torch.float32):
        return torch.tensor(values, dtype=dtype, device=device)

    top_p = column([s.top_p for s in batch]) if any(s.top_p < 1 for s in batch) else None
    return Tensors(*t, column([s.advantage for s in batch]), column([s.temperature for s in batch]), top_p,
                   column([s.episode_tokens or s.model_tokens for s in batch]),
                   column([s.policy_version for s in batch], torch.int64))  # fmt: skip
