"""Weight payloads on the real small model: what an engine is given is what the trainer computes.

float32 payloads are merged into the weights; bfloat16 ones are applied unmerged, since a delta of a
few small steps is mostly below bfloat16's resolution and merging it would round it away.
"""

from __future__ import annotations

import asyncio
import copy

import pytest
import torch

from ptrain.engine.base import Sampling
from ptrain.engine.hf import HFEngine
from ptrain.engine.weights import Adapter, apply_payload, policy_payload

TEXT = "def add(a, b):\n    return a + b\n\n\nprint(add(2, 3))  # prints 5, the sum of two and three"
B_STD = 1e-4  # |B| after about five Adam steps at lr 2e-5 from peft's B = 0: scaling * B @ A is ~1e-5


def _plain(model_path, dtype=torch.float32):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(model_path, dtype=dtype).eval()


def _policy(model_path, dtype, rank: int, targets, b_std: float):
    """A trainer-side peft model (float32 adapter weights, as peft keeps them) with random A and B."""
    from peft import LoraConfig, get_peft_model

    policy = get_peft_model(_plain(model_path, dtype), LoraConfig(r=rank, lora_alpha=2 * rank, target_modules=targets))
    with torch.no_grad():
        for name, p in policy.named_parameters():
            if "lora_B" in name:
                p.normal_(std=b_std)
    return policy.eval()


def _logprobs(model, ids: torch.Tensor) -> torch.Tensor:
    """Each token's logprob after the ones before it, in a full forward pass."""
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0, :-1].float()
    return logits.log_softmax(-1).gather(-1, ids[0, 1:, None])[:, 0]


@pytest.fixture(scope="module")
def ids(tokenizer) -> torch.Tensor:
    return tokenizer(TEXT, return_tensors="pt").input_ids


def test_a_float32_lora_payload_is_merged_and_a_second_replaces_the_first(model_path):
    """apply_payload on the plain model equals peft's own merge, and a second payload replaces the first."""
    plain = _plain(model_path)
    policy = _policy(model_path, torch.float32, 4, ["q_proj", "down_proj"], 0.02)
    state: dict = {}
    for _ in range(2):
        with torch.no_grad():
            for name, p in policy.named_parameters():
                if "lora_" in name:
                    p.normal_(std=0.02)
            apply_payload(plain, policy_payload(policy), state)
        expected = copy.deepcopy(policy).merge_and_unload().state_dict()
        for key, value in plain.state_dict().items():
            torch.testing.assert_close(value, expected[key], rtol=1e-5, atol=1e-6, msg=key)
    assert not any(isinstance(kept, Adapter) for kept in state.values())  # merged: no extra work per token


def test_a_bfloat16_payload_gives_the_trainers_logprobs_which_merging_would_round_away(model_path, ids):
    policy = _policy(model_path, torch.bfloat16, 16, "all-linear", B_STD)  # the trainer's defaults
    payload = policy_payload(policy)
    trainer = _logprobs(policy, ids)
    with policy.disable_adapter():
        base = _logprobs(policy, ids)

    plain = _plain(model_path, torch.bfloat16)
    weights = {k: v.clone() for k, v in plain.state_dict().items()}
    apply_payload(plain, payload, {})
    delivered = _logprobs(plain, ids)
    assert all(torch.equal(v, weights[k]) for k, v in plain.state_dict().items())  # the base weights stay as they were

    merged = _plain(model_path, torch.bfloat16)  # what apply_payload did before: the delta added into bfloat16
    unchanged = []
    with torch.no_grad():
        for name, pair in payload["layers"].items():
            weight = merged.get_submodule(name).weight
            new = (weight.float() + payload["scaling"] * pair["B"] @ pair["A"]).to(weight.dtype)
            unchanged.append((new == weight).float().mean().item())
            weight.copy_(new)
    old = _logprobs(merged, ids)

    away = (trainer - base).abs().max().item()
    assert sum(unchanged) / len(unchanged) > 0.9  # most of the delta is below bfloat16's resolution
    assert away > 0.05  # yet the trainer's policy is not the base model's
    assert (delivered - trainer).abs().max().item() < 1e-4  # in practice bit for bit: the same operations as peft
    assert (old - trainer).abs().max().item() > away / 2  # the merged model was as far off as the base


def test_a_later_bfloat16_payload_of_another_rank_and_layers_replaces_the_first_and_a_full_one_removes_it(
    model_path, ids
):
    plain, state = _plain(model_path, torch.bfloat16), {}
    first = _policy(model_path, torch.bfloat16, 16, "all-linear", B_STD)
    apply_payload(plain, policy_payload(first), state)
    second = _policy(model_path, torch.bfloat16, 4, ["q_proj", "v_proj"], 10 * B_STD)
    apply_payload(plain, policy_payload(second), state)
    assert sorted(state) == sorted(policy_payload(second)["layers"])
    assert (_logprobs(plain, ids) - _logprobs(second, ids)).abs().max().item() < 1e-4

    base = _plain(model_path, torch.bfloat16)
    apply_payload(plain, policy_payload(base), state)  # a full payload: the weights, and no adapter on top
    assert not state and torch.equal(_logprobs(plain, ids), _logprobs(base, ids))


def test_the_hf_engine_samples_with_a_delivered_bfloat16_adapter_as_on_the_trainers_peft_model(model_path, ids):
    """Through update_weights the engine's own passes (prefill, decode) run the adapter: the same tokens
    and logprobs as an engine on the trainer's peft model, not those of the base."""
    policy = _policy(model_path, torch.bfloat16, 16, "all-linear", B_STD)
    payload, state = policy_payload(policy), {}
    prompt, sampling = ids[0, :16].tolist(), Sampling(max_new_tokens=12, temperature=1.0, seed=0)

    async def sample(engine: HFEngine, update=None):
        try:
            before = await engine.generate(prompt, sampling)
            if update is None:
                return before, None
            await asyncio.to_thread(engine.update_weights, update, 1)
            return before, await engine.generate(prompt, sampling)
        finally:
            await engine.close()

    base, delivered = asyncio.run(sample(HFEngine(_plain(model_path, torch.bfloat16)),
                                         lambda m: apply_payload(m, payload, state)))  # fmt: skip
    trainer, _ = asyncio.run(sample(HFEngine(policy)))
    assert delivered.policy_version == 1 and delivered.token_ids == trainer.token_ids
    assert max(abs(a - b) for a, b in zip(delivered.logprobs, trainer.logprobs, strict=True)) < 1e-4
    assert (
        base.token_ids != trainer.token_ids
        or max(abs(a - b) for a, b in zip(base.logprobs, trainer.logprobs, strict=True)) > 1e-2
    )
