"""Choosing the next token from logits: greedy, temperature and top-p, one generator per request.

Pure functions over tensors, shared by the engines that run the model themselves (`hf.py`). The
logprob returned is that of the distribution the token was drawn from (logits / temperature, before
top-p), which is what the trainer recomputes as the old policy.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ptrain.engine.base import Sampling


def sample(
    logits: torch.Tensor, samplings: Sequence[Sampling], generators: Sequence[torch.Generator | None]
) -> tuple[torch.Tensor, torch.Tensor]:
    """One token per row of `logits` [rows, vocab] and its logprob under logits / temperature.

    Temperature 0 is greedy with the untempered logprob; top-p filters after the logprob is taken.
    Each row draws from its own generator, so what else is in the batch does not change its sample.
    """
    temperatures = torch.tensor([s.temperature or 1.0 for s in samplings], device=logits.device)
    logprobs = torch.log_softmax(logits / temperatures[:, None], dim=-1)
    tokens = logits.argmax(dim=-1)
    for row, (s, generator) in enumerate(zip(samplings, generators, strict=True)):
        if s.temperature > 0:
            probs = logprobs[row].exp()
            if s.top_p < 1:
                probs = top_p_filter(probs, s.top_p)
            tokens[row] = torch.multinomial(probs, 1, generator=generator)[0]
    return tokens, logprobs.gather(1, tokens[:, None])[:, 0]


def top_p_filter(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    """Zero the least likely tokens outside the smallest set whose mass reaches top_p."""
    ordered, order = probs.sort(descending=True)
    ordered[ordered.cumsum(0) - ordered >= top_p] = 0  # the mass before them already reached top_p
    return torch.zeros_like(probs).scatter_(0, order, ordered)
