"""GRPO's pure functions alone, and the loss and its gradient against TRL's GRPOTrainer on the same batch."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from ptrain.train.grpo import LossConfig, aggregate, group_advantages, is_flat, per_token_loss, token_logprobs

# ---------------------------------------------------------------------------------------------------------------------
# Advantages


def test_grpo_advantages_are_standardised_within_the_group():
    rewards = np.array([0.0, 1.0, 1.0, 0.5, 3.0, -2.0])
    adv = group_advantages(rewards, "grpo", eps=0.0)
    assert adv.mean() == pytest.approx(0.0, abs=1e-12)
    assert adv.std(ddof=1) == pytest.approx(1.0, abs=1e-12)
    # the default eps only guards the division: the result is standardised to within eps / std
    assert np.allclose(group_advantages(rewards), adv, rtol=1e-3)


def test_grpo_advantages_keep_the_order_of_the_rewards():
    rewards = np.array([0.2, 0.9, 0.1, 0.5])
    assert np.array_equal(np.argsort(group_advantages(rewards)), np.argsort(rewards))


def test_drgrpo_advantages_are_only_centred():
    rewards = np.array([0.0, 1.0, 1.0, 0.5, 3.0])
    adv = group_advantages(rewards, "drgrpo")
    assert np.allclose(adv, rewards - rewards.mean())
    assert adv.mean() == pytest.approx(0.0, abs=1e-12)
    assert adv.std(ddof=1) != pytest.approx(1.0)


@pytest.mark.parametrize("kind", ["grpo", "drgrpo"])
def test_flat_group_has_zero_advantages(kind):
    rewards = np.full(5, 0.7)
    assert is_flat(rewards)
    assert np.array_equal(group_advantages(rewards, kind), np.zeros(5))


def test_group_with_a_spread_is_not_flat():
    assert not is_flat([0.0, 0.0, 1.0])
    assert not is_flat([1.0, 1.0 + 1e-6])


def test_empty_and_single_sample_groups_are_flat():
    assert is_flat([])
    assert is_flat([3.0])
    assert np.array_equal(group_advantages([3.0]), [0.0])


def test_unknown_advantage_kind_raises_value_error():
    with pytest.raises(ValueError, match="advantage kind"):
        group_advantages([0.0, 1.0], "ppo")


# ---------------------------------------------------------------------------------------------------------------------
# Loss settings


@pytest.mark.parametrize(
    "settings",
    [
        {"aggregation": "mean"},
        {"old_policy": "reference"},
        {"ratio_level": "batch"},
        {"clip_low": 1.0},
        {"clip_low": -0.1},
        {"clip_high": -0.1},
        {"is_cap": 0.5},
        {"kl_beta": -0.01},
        {"aggregation": "constant"},
        {"aggregation": "constant", "max_tokens": -4},
    ],
    ids=lambda settings: ",".join(f"{k}={v}" for k, v in settings.items()),
)
def test_bad_loss_settings_raise_value_error(settings):
    with pytest.raises(ValueError):
        LossConfig(**settings)


def test_kl_without_reference_logprobs_raises_value_error():
    lp = torch.full((1, 3), -1.0)
    with pytest.raises(ValueError, match="reference"):
        per_token_loss(lp, lp, torch.ones(1), torch.ones(1, 3), LossConfig(kl_beta=0.1))


# ---------------------------------------------------------------------------------------------------------------------
# The per-token loss


def one_token_grad(cfg: LossConfig, ratio: float, advantage: float, behaviour: float = -1.0):
    """Loss and d loss / d logprob of one model token whose ratio to the behaviour policy is `ratio`."""
    logprob = torch.tensor([[behaviour + math.log(ratio)]], dtype=torch.float64, requires_grad=True)
    loss, _ = per_token_loss(
        logprob, torch.tensor([[behaviour]], dtype=torch.float64), torch.tensor([advantage]), torch.ones(1, 1), cfg
    )
    (grad,) = torch.autograd.grad(loss.sum(), logprob)
    return loss.item(), grad.item()


@pytest.mark.parametrize("ratio_level", ["token", "sequence"])
def test_positive_advantage_gets_no_gradient_above_the_upper_clip(ratio_level):
    cfg = LossConfig(clip_low=0.2, clip_high=0.28, is_cap=10.0, ratio_level=ratio_level)
    loss, grad = one_token_grad(cfg, ratio=1.5, advantage=1.0)
    assert loss == pytest.approx(-1.28)
    assert grad == 0.0
    # just inside the clip range the gradient is the ratio times the advantage
    loss, grad = one_token_grad(cfg, ratio=1.2, advantage=1.0)
    assert loss == pytest.approx(-1.2)
    assert grad == pytest.approx(-1.2)


@pytest.mark.parametrize("ratio_level", ["token", "sequence"])
def test_negative_advantage_gets_no_gradient_below_the_lower_clip(ratio_level):
    cfg = LossConfig(clip_low=0.2, clip_high=0.28, is_cap=10.0, ratio_level=ratio_level)
    loss, grad = one_token_grad(cfg, ratio=0.7, advantage=-1.0)
    assert loss == pytest.approx(0.8)
    assert grad == 0.0
    loss, grad = one_token_grad(cfg, ratio=0.9, advantage=-1.0)
    assert loss == pytest.approx(0.9)
    assert grad == pytest.approx(0.9)


def test_clip_never_removes_the_gradient_on_the_side_that_undoes_a_mistake():
    cfg = LossConfig(clip_low=0.2, clip_high=0.28, is_cap=10.0)
    # positive advantage, token now much less likely: the unclipped ratio is the minimum, the gradient stays
    assert one_token_grad(cfg, ratio=0.5, advantage=1.0)[1] == pytest.approx(-0.5)
    # negative advantage, token now much likelier: the gradient stays too (up to the cap)
    assert one_token_grad(cfg, ratio=1.6, advantage=-1.0)[1] == pytest.approx(1.6)


def test_behaviour_cap_limits_the_unclipped_ratio_for_negative_advantages():
    capped = LossConfig(clip_low=0.2, clip_high=0.28, is_cap=2.0)
    loss, grad = one_token_grad(capped, ratio=5.0, advantage=-1.0)
    assert loss == pytest.approx(2.0)
    assert grad == 0.0
    # below the cap the ratio is untouched
    assert one_token_grad(capped, ratio=1.9, advantage=-1.0) == pytest.approx((1.9, 1.9))
    # without a cap that binds, the same token costs the full ratio
    assert one_token_grad(LossConfig(is_cap=100.0), ratio=5.0, advantage=-1.0) == pytest.approx((5.0, 5.0))


def test_trainer_mode_weights_each_token_by_the_truncated_behaviour_ratio():
    cfg = LossConfig(old_policy="trainer", is_cap=2.0)
    lp = torch.tensor([[-1.0, -2.0, -0.5]], dtype=torch.float64, requires_grad=True)
    behaviour = torch.tensor([[-1.5, -0.5, -3.0]], dtype=torch.float64)
    loss, stats = per_token_loss(lp, behaviour, torch.tensor([-0.5]), torch.ones(1, 3), cfg)
    weight = torch.clamp(torch.exp(lp.detach() - behaviour), max=2.0)
    assert torch.allclose(stats["ratio"], torch.ones(1, 3, dtype=torch.float64))  # old = the trainer itself
    assert torch.allclose(loss, 0.5 * weight)
    (grad,) = torch.autograd.grad(loss.sum(), lp)
    assert torch.allclose(grad, 0.5 * weight)  # the weight carries no gradient of its own


def test_sequence_ratio_is_the_mean_log_ratio_of_the_model_tokens():
    lp = torch.tensor([[-1.0, -2.0, -0.5, -4.0], [-0.1, -0.2, -0.3, -0.4]])
    behaviour = torch.tensor([[-1.2, -1.9, 0.0, -1.0], [-0.3, -0.2, -0.1, 0.0]])
    mask = torch.tensor([[1, 1, 0, 1], [0, 1, 1, 0]])
    _, stats = per_token_loss(lp, behaviour, torch.ones(2), mask, LossConfig(ratio_level="sequence", is_cap=10.0))
    expected = torch.tensor([math.exp((0.2 - 0.1 - 3.0) / 3), math.exp((0.0 - 0.2) / 2)])
    assert torch.allclose(stats["ratio"], expected.unsqueeze(1).expand(2, 4))


def test_kl_term_is_the_k3_estimator_scaled_by_beta():
    lp = torch.tensor([[-1.0, -2.0]])
    ref = torch.tensor([[-1.5, -1.0]])
    base, _ = per_token_loss(lp, lp, torch.ones(1), torch.ones(1, 2), LossConfig())
    with_kl, stats = per_token_loss(lp, lp, torch.ones(1), torch.ones(1, 2), LossConfig(kl_beta=0.1), ref)
    k3 = torch.exp(ref - lp) - (ref - lp) - 1
    assert torch.allclose(stats["kl"], k3)
    assert (k3 >= 0).all()
    assert torch.allclose(with_kl - base, 0.1 * k3)


MASK_CONFIGS = {
    "behaviour": LossConfig(is_cap=1.5),
    "trainer": LossConfig(old_policy="trainer", is_cap=1.5),
    "sequence-ratio": LossConfig(ratio_level="sequence", is_cap=1.5, aggregation="sequence"),
    "kl-constant": LossConfig(kl_beta=0.04, aggregation="constant", max_tokens=12),
}


@pytest.mark.parametrize("cfg", MASK_CONFIGS.values(), ids=MASK_CONFIGS.keys())
def test_masked_tokens_contribute_nothing_to_loss_or_gradient(cfg):
    gen = torch.Generator().manual_seed(3)
    B, T = 3, 12
    mask = torch.zeros(B, T)
    mask[0, 4:7] = 1  # prompt, model turn, tool output, model turn, padding
    mask[0, 9:11] = 1
    mask[1, 2:12] = 1
    mask[2, 5:6] = 1
    lp = -torch.rand(B, T, generator=gen) * 3
    behaviour = lp + 0.4 * torch.randn(B, T, generator=gen)
    ref = lp + 0.4 * torch.randn(B, T, generator=gen)
    adv = torch.tensor([1.0, -0.7, -1.3])

    def run(lp, behaviour, ref):
        lp = lp.clone().requires_grad_(True)
        loss, _ = per_token_loss(lp, behaviour, adv, mask, cfg, ref)
        total = aggregate(loss, mask, cfg, total_tokens=mask.sum(), total_seqs=B)
        (grad,) = torch.autograd.grad(total, lp)
        return loss.detach(), total.detach(), grad

    loss, total, grad = run(lp, behaviour, ref)
    # garbage on the masked positions (finite, like the 0.0 the store keeps there) changes nothing
    off = mask == 0
    noise = lambda: torch.where(off, 5 * torch.randn(B, T, generator=gen), 0.0)  # noqa: E731
    loss2, total2, grad2 = run(lp + noise(), behaviour + noise(), ref + noise())
    assert (loss[off] == 0).all()
    assert (grad[off] == 0).all() and (grad2[off] == 0).all()
    assert torch.equal(loss, loss2)
    assert torch.allclose(total, total2, rtol=0, atol=1e-7)
    assert torch.allclose(grad, grad2, rtol=0, atol=1e-7)
    assert (grad[~off] != 0).any()


# ---------------------------------------------------------------------------------------------------------------------
# Aggregation


@pytest.mark.parametrize("aggregation", ["token", "sequence", "constant"])
def test_micro_batch_shares_sum_to_the_whole_batch_loss(aggregation):
    gen = torch.Generator().manual_seed(7)
    cfg = LossConfig(aggregation=aggregation, max_tokens=10)
    lengths = [7, 10, 3, 1, 5]  # model tokens after a one-token prompt, then right padding
    B, T = len(lengths), 1 + max(lengths)
    mask = torch.zeros(B, T)
    for b, n in enumerate(lengths):
        mask[b, 1 : 1 + n] = 1
    mask[0, 4] = 0  # a tool token inside the model's turn
    loss = torch.randn(B, T, generator=gen) * mask
    whole = aggregate(loss, mask, cfg, total_tokens=mask.sum(), total_seqs=B)
    # two micro-batches, the second padded only to its own longest row; the totals are the step's
    parts = [(loss[:2], mask[:2]), (loss[2:, :6], mask[2:, :6])]
    assert parts[1][1].sum() == mask[2:].sum()
    shares = [aggregate(part, m, cfg, total_tokens=mask.sum(), total_seqs=B) for part, m in parts]
    assert torch.allclose(sum(shares), whole, rtol=0, atol=1e-6)
    # and the whole-batch value is the documented formula
    expected = {
        "token": loss.sum() / mask.sum(),
        "sequence": (loss.sum(1) / mask.sum(1)).mean(),
        "constant": loss.sum() / (B * 10),
    }[aggregation]
    assert torch.allclose(whole, expected, rtol=0, atol=1e-6)


# ---------------------------------------------------------------------------------------------------------------------
# Logprobs


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_token_logprobs_equal_log_softmax_gather(dtype):
    gen = torch.Generator().manual_seed(11)
    logits = (torch.randn(3, 9, 50, generator=gen) * 4).to(dtype)
    ids = torch.randint(0, 50, (3, 9), generator=gen)
    out = token_logprobs(logits, ids)
    direct = torch.log_softmax(logits[:, :-1].float(), dim=-1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    assert out.dtype == torch.float32 and out.shape == ids.shape
    assert (out[:, 0] == 0).all()
    assert torch.allclose(out[:, 1:], direct, rtol=0, atol=1e-5)


def test_token_logprobs_carry_the_gradient_of_the_logits():
    logits = torch.randn(2, 5, 7, requires_grad=True)
    ids = torch.randint(0, 7, (2, 5))
    (grad,) = torch.autograd.grad(token_logprobs(logits, ids).sum(), logits)
    direct = torch.log_softmax(logits[:, :-1], dim=-1).gather(-1, ids[:, 1:].unsqueeze(-1)).sum()
    (expected,) = torch.autograd.grad(direct, logits)
    assert torch.allclose(grad, expected, atol=1e-6)


# ---------------------------------------------------------------------------------------------------------------------
# Parity with TRL's GRPOTrainer: the same batch, the same model, the same loss and gradient

VOCAB = 128
PROMPT_LENS = [3, 5, 4, 5]  # left-padded to 5 on TRL's side
COMPLETION_LENS = [7, 4, 8, 6]  # right-padded to MAX_COMPLETION
MAX_COMPLETION = 8
TOOL_SPANS = {0: (2, 4), 2: (3, 6)}  # tool output inside the completion: a multi-turn episode
REWARDS = [[1.0, 0.0], [0.9, 0.2]]  # two groups of two
NOISE = 0.5  # behaviour = model + NOISE * N(0, 1): enough for the clip and the cap to bite
CAP = 1.5


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    """A random two-layer Llama and a word-level tokenizer, saved so TRL can load it (and its reference copy)."""
    from tokenizers import Tokenizer, models
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    path = tmp_path_factory.mktemp("tiny-llama")
    vocab = {f"t{i}": i for i in range(VOCAB)}
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(models.WordLevel(vocab, unk_token="t0")),
        pad_token="t0",
        eos_token="t1",
        unk_token="t0",
    )
    config = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=1,
    )
    torch.manual_seed(0)
    LlamaForCausalLM(config).float().save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@dataclass(frozen=True)
class Case:
    ptrain: dict  # LossConfig
    trl: dict  # GRPOConfig
    trainer_mode: bool = False  # TRL's vLLM importance-sampling correction, token_truncate
    ref: bool = False  # KL against reference logprobs


CASES = {
    "token-behaviour-bnpo": Case(
        ptrain={"aggregation": "token", "is_cap": CAP},
        trl={"loss_type": "bnpo", "delta": CAP},
    ),
    "token-behaviour-dapo": Case(
        ptrain={"aggregation": "token", "is_cap": CAP},
        trl={"loss_type": "dapo", "delta": CAP},
    ),
    "sequence-grpo": Case(
        ptrain={"aggregation": "sequence", "is_cap": CAP},
        trl={"loss_type": "grpo", "delta": CAP},
    ),
    "constant-dr_grpo": Case(
        ptrain={"aggregation": "constant", "max_tokens": MAX_COMPLETION, "is_cap": CAP},
        trl={"loss_type": "dr_grpo", "delta": CAP},
    ),
    "trainer-tis": Case(
        ptrain={"aggregation": "token", "old_policy": "trainer", "is_cap": CAP},
        trl={"loss_type": "bnpo"},
        trainer_mode=True,
    ),
    "gspo": Case(
        ptrain={"aggregation": "sequence", "ratio_level": "sequence", "is_cap": CAP},
        trl={"loss_type": "grpo", "delta": CAP, "importance_sampling_level": "sequence"},
    ),
    "kl": Case(
        ptrain={"aggregation": "token", "is_cap": CAP, "kl_beta": 0.04},
        trl={"loss_type": "bnpo", "delta": CAP, "beta": 0.04},
        ref=True,
    ),
    "trainer-tis-sequence-kl": Case(
        ptrain={"aggregation": "sequence", "old_policy": "trainer", "is_cap": CAP, "kl_beta": 0.04},
        trl={"loss_type": "grpo", "beta": 0.04},
        trainer_mode=True,
        ref=True,
    ),
}


def make_trainer(model_dir, output_dir, case: Case):
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    args = GRPOConfig(
        output_dir=str(output_dir),
        report_to="none",
        use_cpu=True,
        per_device_train_batch_size=len(PROMPT_LENS),
        gradient_accumulation_steps=1,
        num_generations=2,
        max_completion_length=MAX_COMPLETION,
        epsilon=0.2,  # clip_low
        epsilon_high=0.28,  # clip_high
        use_bias_correction_kl=False,  # ptrain's KL is TRL's plain k3, not weighted by the ratio
        bf16=False,  # TRL defaults to bf16 autocast, also on the CPU; both sides run the float32 model as is
        **case.trl,
    )
    trainer = GRPOTrainer(
        model=str(model_dir),
        reward_funcs=lambda completions, **_: [0.0] * len(completions),
        args=args,
        train_dataset=Dataset.from_dict({"prompt": ["t5 t6 t7"] * 4}),
        processing_class=AutoTokenizer.from_pretrained(model_dir),
    )
    trainer.model.train()
    trainer.current_gradient_accumulation_steps = 1
    if case.trainer_mode:  # set after construction: TRL would otherwise start vLLM
        trainer.use_vllm = True
        trainer.vllm_importance_sampling_correction = True
        trainer.vllm_importance_sampling_mode = "token_truncate"
    return trainer


@pytest.mark.filterwarnings("ignore:`gradient_checkpointing` is deprecated:FutureWarning")  # TRL's own default
@pytest.mark.parametrize("name", CASES)
def test_loss_and_gradient_match_trl_grpo_trainer(name, tiny_model_dir, tmp_path):
    case = CASES[name]
    cfg = LossConfig(clip_low=0.2, clip_high=0.28, **case.ptrain)
    trainer = make_trainer(tiny_model_dir, tmp_path, case)
    model = trainer.model
    params = [p for p in model.parameters() if p.requires_grad]
    gen = torch.Generator().manual_seed(1234)
    B, P, C = len(PROMPT_LENS), max(PROMPT_LENS), MAX_COMPLETION

    # TRL's batch: left-padded prompts, right-padded completions, tool output masked out of the completion
    prompt_ids = torch.zeros(B, P, dtype=torch.long)
    prompt_mask = torch.zeros(B, P, dtype=torch.long)
    completion_ids = torch.zeros(B, C, dtype=torch.long)
    completion_mask = torch.zeros(B, C, dtype=torch.long)
    tool_mask = torch.ones(B, C, dtype=torch.long)
    for b, (p, c) in enumerate(zip(PROMPT_LENS, COMPLETION_LENS, strict=True)):
        prompt_ids[b, P - p :] = torch.randint(2, VOCAB, (p,), generator=gen)
        prompt_mask[b, P - p :] = 1
        completion_ids[b, :c] = torch.randint(2, VOCAB, (c,), generator=gen)
        completion_mask[b, :c] = 1
    for b, (start, end) in TOOL_SPANS.items():
        tool_mask[b, start:end] = 0
    trl_mask = (completion_mask * tool_mask).float()
    advantages = torch.tensor(np.concatenate([group_advantages(np.array(r)) for r in REWARDS]), dtype=torch.float32)

    # ptrain's batch: one right-padded row per sequence, prompt + completion
    T = P + C
    input_ids = torch.zeros(B, T, dtype=torch.long)
    attention_mask = torch.zeros(B, T, dtype=torch.long)
    completion_at = []  # row positions of each completion token
    for b, (p, c) in enumerate(zip(PROMPT_LENS, COMPLETION_LENS, strict=True)):
        input_ids[b, :p] = prompt_ids[b, P - p :]
        input_ids[b, p : p + C] = completion_ids[b]
        attention_mask[b, : p + c] = 1
        completion_at.append(torch.arange(p, p + C))
    rows = torch.arange(B).unsqueeze(1)
    at = torch.stack(completion_at)

    def to_rows(x):  # (B, C) at completion positions -> (B, T)
        out = torch.zeros(B, T, dtype=x.dtype)
        out[rows, at] = x
        return out

    mask = to_rows(trl_mask)

    # the behaviour (engine) logprobs: the model's own, perturbed; 0.0 on tokens the model did not sample
    with torch.no_grad():
        model_lp = token_logprobs(model(input_ids=input_ids, attention_mask=attention_mask).logits, input_ids)
    model_lp_c = model_lp[rows, at]
    behaviour_c = (model_lp_c + NOISE * torch.randn(B, C, generator=gen)) * trl_mask
    ref_c = (model_lp_c + NOISE * torch.randn(B, C, generator=gen)) * trl_mask

    inputs = {
        "prompt_ids": prompt_ids,
        "prompt_mask": prompt_mask,
        "completion_ids": completion_ids,
        "completion_mask": completion_mask,
        "tool_mask": tool_mask,
        "advantages": advantages,
        "num_items_in_batch": trl_mask.sum(),
    }
    if case.trainer_mode:
        # what TRL's _generate_and_score_completions computes: its own logprobs before the step vs the sampler's
        with torch.no_grad():
            old, _, _ = trainer._get_per_token_logps_and_entropies(
                model, torch.cat([prompt_ids, completion_ids], 1), torch.cat([prompt_mask, completion_mask], 1), C
            )
        inputs["old_per_token_logps"] = None
        inputs["importance_sampling_ratio"] = torch.clamp(torch.exp((old - behaviour_c) * trl_mask), max=CAP)
    else:
        inputs["old_per_token_logps"] = behaviour_c
    if case.ref:
        inputs["ref_per_token_logps"] = ref_c

    trl_loss = trainer._compute_loss(model, inputs)
    trl_grads = torch.autograd.grad(trl_loss, params)

    lp = token_logprobs(model(input_ids=input_ids, attention_mask=attention_mask).logits, input_ids)
    loss, stats = per_token_loss(lp, to_rows(behaviour_c), advantages, mask, cfg, to_rows(ref_c) if case.ref else None)
    ours = aggregate(loss, mask, cfg, total_tokens=mask.sum(), total_seqs=B)
    our_grads = torch.autograd.grad(ours, params)

    # the batch is not a trivial one: the clip and the cap (or the truncation of the weight) both bind somewhere
    if cfg.old_policy == "behaviour":
        assert stats["clipped"][mask.bool()].any()
        assert (stats["ratio"][mask.bool()] == CAP).any()
    else:
        assert (inputs["importance_sampling_ratio"][trl_mask.bool()] == CAP).any()

    assert abs(ours.item() - trl_loss.item()) < 1e-5, (ours.item(), trl_loss.item())
    assert abs(ours.item()) > 1e-3  # a loss worth comparing
    assert sum(bool((g != 0).any()) for g in trl_grads) == len(params)  # every parameter gets a gradient
    for p, ours_g, trl_g in zip(params, our_grads, trl_grads, strict=True):
        torch.testing.assert_close(ours_g, trl_g, rtol=1e-5, atol=1e-6, msg=lambda m, p=p: f"{p.shape}: {m}")
