"""Choosing the next token from logits: greedy, temperature and top-p, one generator per request.

Pure functions over tensors, shared by the engines that run the model themselves (`hf.py`) and by
the trainer (`ptrain/train/model.py`), so both speak of one distribution: `processed_logprobs` is
the distribution a token is drawn from, the logits divided by the temperature and, under top-p,
renormalised over the nucleus (-inf outside it). The stored logprob of a sampled token is its value
there (vLLM's `processed_logprobs`), and the trainer recomputes the same function of its own logits
with each episode's temperature and top-p, so the importance ratio compares like with like.
Temperature 0 is greedy, and its logprob is that of the untransformed distribution (T = 1, top-p 1).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ptrain.engine.base import Sampling


def transform(temperature: float, top_p: float) -> tuple[float, float]:
    """The (temperature, top_p) a logprob is taken under: greedy (T = 0) scores the untransformed logits."""
    return (temperature, top_p) if temperature > 0 else (1.0, 1.0)


def processed_logprobs(logits: torch.Tensor, temperatures: torch.Tensor, top_ps: torch.Tensor | None = None,
                       keep: torch.Tensor | None = None) -> torch.Tensor:  # fmt: skip
    """log-probabilities [rows, vocab] of the distribution each row samples from, float32.

    `temperatures` and `top_ps` are one value per row (> 0, and in (0, 1]). Under top-p the nucleus
    is the smallest set of most likely tokens whose mass reaches top_p (as `top_p_filter`); tokens
    outside it get -inf and the rest are renormalised. `keep` (one token id per row) is always kept
    in the nucleus: the trainer scores a token the engine drew, and a rounding difference at the
    nucleus's edge must cost a little probability, never an infinite ratio. Differentiable in
    `logits`; the choice of nucleus is not (it is a set)."""
    scaled = logits.float() / temperatures.to(logits.device, torch.float32)[:, None]
    if top_ps is None or bool((top_ps >= 1).all()):
        return torch.log_softmax(scaled, dim=-1)
    with torch.no_grad():
        probs = torch.softmax(scaled, dim=-1)
        ordered, order = probs.sort(dim=-1, descending=True)
        outside = (ordered.cumsum(-1) - ordered) >= top_ps.to(probs.device, torch.float32)[:, None]
        outside = torch.zeros_like(outside).scatter_(-1, order, outside)
        if keep is not None:
            outside[torch.arange(len(keep), device=outside.device), keep] = False
    return torch.log_softmax(scaled.masked_fill(outside, float("-inf")), dim=-1)


def sample(
    logits: torch.Tensor, samplings: Sequence[Sampling], generators: Sequence[torch.Generator | None]
) -> tuple[torch.Tensor, torch.Tensor]:
    """One token per row of `logits` [rows, vocab] and its logprob under `processed_logprobs`.

    Each row draws from its own generator, so what else is in the batch does not change its sample.
    """
    pairs = [transform(s.temperature, s.top_p) for s in samplings]
    temperatures = torch.tensor([t for t, _ in pairs], device=logits.device)
    top_ps = torch.tensor([p for _, p in pairs], device=logits.device)
    logprobs = processed_logprobs(logits, temperatures, top_ps)
    tokens = logits.argmax(dim=-1)
    for row, (s, generator) in enumerate(zip(samplings, generators, strict=True)):
        if s.temperature > 0:
            tokens[row] = draw(logprobs[row].exp(), generator)
    return tokens, logprobs.gather(1, tokens[:, None])[:, 0]


def draw(probs: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
    """One index (a 0-d tensor, left on the device) drawn with probability proportional to `probs`
    (1D, non-negative, not all zero).

    Inverse CDF: one uniform from `generator`, then a binary search of the running sum, in float64.
    `torch.multinomial` draws one exponential per vocabulary entry instead (a 49k-token vocabulary:
    about 1.3 ms a row on a CPU core, 10% of a batch-16 decode step; this takes 0.07 ms). A token of
    probability 0 is never drawn: its running sum equals the one before it, and should `u * total`
    round up to the total, the last token of nonzero probability (where the sum first reaches the
    total) is taken instead of one past the end.
    """
    cdf = probs.double().cumsum(0)
    u = torch.rand((), dtype=torch.float64, generator=generator, device=probs.device)
    return torch.minimum(torch.searchsorted(cdf, u * cdf[-1], right=True), torch.searchsorted(cdf, cdf[-1]))


def top_p_filter(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    """Zero the least likely tokens outside the smallest set whose mass reaches top_p."""
    ordered, order = probs.sort(descending=True)
    ordered[ordered.cumsum(0) - ordered >= top_p] = 0  # the mass before them already reached top_p
    return torch.zeros_like(probs).scatter_(0, order, ordered)
