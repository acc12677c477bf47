"""The logprobs-mode check: does a server return the logprobs of the distribution it sampled from?

Training needs the logprobs of the distribution each token was drawn from (logits / temperature,
renormalised over the top-p nucleus), which the trainer recomputes as the old policy. vLLM returns
that only with `--logprobs-mode processed_logprobs` (0.10.2 and newer; its default `raw_logprobs` is
before temperature and top-p), and says nothing of its mode over HTTP, so the `openai` engine checks
at start (`check_logprobs`, on by default) and refuses a server that fails: a model card reporting
`logprobs_mode` (ptrain serve's does) is taken at its word; otherwise `probe_logprobs` samples a few
short prompts greedily, at T = 1 under a nucleus of one token, and at a low temperature, and
`logprobs_verdict` says which transform the answers agree with (see there why it is decisive). A
server whose logprobs are tempered but ignore the nucleus (SGLang's) is used at top_p = 1 only.

It is a module of its own because it is a small experiment with its own constants and reasoning,
run once per engine: it reaches the server only through the `post` function it is given, so the
verdict can be tested on logprobs written by hand and the probe against any server.

    verdict, why = probe_logprobs(post, "http://127.0.0.1:8000/v1/completions")  # "processed", ...
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ptrain.engine.openai_wire import NEUTRAL, completion_from_response, has_token_ids

log = logging.getLogger(__name__)
VLLM_FIX = "start vLLM (0.10.2 or newer) with --logprobs-mode processed_logprobs"  # the fix a refusal names

PROBE_PROMPTS = ("Once upon a time", "My favourite word is", "Here is a random number:", "Name any animal:")
PROBE_TOKENS = 16
PROBE_SEED = 1234
PROBE_TEMPERATURE = 0.1  # divides the logits by 10: the greedy token's logprob moves well towards 0
PROBE_TOP_P = 1e-4  # a nucleus of the most likely token alone wherever that token has p >= 1e-4
PROBE_MIN_NATS = 3.0  # the greedy tokens' surprisal the comparisons need, summed over positions
PROBE_NOISE = 0.02  # per position: logits computed in another batch (bfloat16 kernels) move this much
PROBE_SETTINGS = {"greedy": (0.0, 1.0), "nucleus": (1.0, PROBE_TOP_P), "tempered": (PROBE_TEMPERATURE, 1.0)}


def probe_logprobs(post: Any, url: str) -> tuple[str, str]:
    """Ask the server (`post(payload) -> response body`) the probe's questions; `logprobs_verdict`'s answer.

    Each prompt is sampled three times, PROBE_TOKENS tokens each: greedy, at T = 1 with top_p
    PROBE_TOP_P, and at T = PROBE_TEMPERATURE (both seeded). Prompts are added until the comparisons
    have the evidence they need or the prompts run out. ("text", why) if the server gives no token ids."""
    runs: dict[str, list[tuple[tuple[int, ...], tuple[float, ...]]]] = {kind: [] for kind in PROBE_SETTINGS}
    verdict, why = "undecided", "no prompt was asked"
    for prompt in PROBE_PROMPTS:
        for kind, (temperature, top_p) in PROBE_SETTINGS.items():
            body = post({"prompt": prompt, "max_tokens": PROBE_TOKENS, "temperature": temperature, "top_p": top_p,
                         "seed": PROBE_SEED, "logprobs": 1, "ignore_eos": True, "skip_special_tokens": False,
                         "return_token_ids": True, "return_tokens_as_token_ids": True, **NEUTRAL})  # fmt: skip
            if not has_token_ids(body):
                return "text", "no token ids"
            done = completion_from_response(body, 0, 0, url)
            runs[kind].append((done.token_ids, done.logprobs))
        verdict, why = logprobs_verdict(runs["greedy"], runs["nucleus"], runs["tempered"])
        if verdict != "undecided":
            break
    return verdict, why


def logprobs_verdict(greedy: Sequence, nucleus: Sequence, tempered: Sequence) -> tuple[str, str]:
    """Which transform a server's logprobs agree with, from the probe's three samples of each prompt.

    Each argument is one (token ids, logprobs) per prompt. A position is compared where a sample
    still follows the greedy one (same prefix, same token), against the greedy logprob r, which is
    of the untransformed distribution whatever the server's mode (vLLM, SGLang and the hf engine
    score greedy tokens so). The hypotheses predict, for the greedy token g:

        nucleus (T = 1, top_p 1e-4):  processed 0 exactly (a nucleus of g alone);  raw and tempered r
        tempered (T = 0.1):          processed and tempered log softmax(l / T)_g > r;  raw r

    Raw logprobs cannot move between the samples, since they depend on the token and its prefix
    only; processed ones must. Each comparison is decisive once the compared greedy tokens carry
    PROBE_MIN_NATS of surprisal (-sum r): the hypotheses are then further apart than noise
    (PROBE_NOISE per position + 10% of the surprisal) allows. A model near-certain at every compared
    position (r near 0, where no transform changes much) leaves it "undecided".

    Returns (verdict, why): "processed" (temperature and nucleus applied), "tempered" (temperature
    only), "raw", "other" (agrees with neither, or values above 0: logits) or "undecided"."""
    if any(x > 1e-3 for _, values in (*greedy, *nucleus, *tempered) for x in values):
        return "other", "some values are above 0, so they are not logprobs"
    results = []
    for name, runs in (("nucleus", nucleus), ("tempered", tempered)):
        pairs = [(r, x) for g, o in zip(greedy, runs, strict=True) for r, x in _common_prefix(g, o)]
        nats = -sum(r for r, _ in pairs)
        band = PROBE_NOISE * len(pairs) + 0.1 * nats
        moved = sum(abs(x - r) for r, x in pairs)
        if nats < PROBE_MIN_NATS:
            outcome = "undecided"
        elif moved <= band:
            outcome = "unchanged"
        elif name == "nucleus":
            outcome = "applied" if sum(abs(x) for _, x in pairs) <= band else "neither"
        else:
            outcome = "applied" if sum(x - r for r, x in pairs) > band else "neither"
        results.append(outcome)
        log.debug("logprobs probe, %s: %d positions, %.2f nats, moved %.3f (band %.3f): %s",
                  name, len(pairs), nats, moved, band, outcome)  # fmt: skip
    why = f"nucleus sample {results[0]}, low-temperature sample {results[1]}"
    table = {("applied", "applied"): "processed", ("unchanged", "applied"): "tempered",
             ("unchanged", "unchanged"): "raw"}  # fmt: skip
    if "undecided" in results:
        return "undecided", f"the model was near-certain on the probe prompts ({why})"
    return table.get((results[0], results[1]), "other"), why


def _common_prefix(greedy: tuple, other: tuple) -> list[tuple[float, float]]:
    """(greedy logprob, other logprob) at each position where `other` still follows the greedy tokens."""
    pairs = []
    for g, r, o, x in zip(*greedy, *other, strict=False):
        if g != o:
            break
        pairs.append((r, x))
    return pairs
