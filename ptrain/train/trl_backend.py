"""`ptrain train RUN --trainer trl`: TRL's GRPOTrainer fed from the store, for users who want its other loss variants.

What each trainer supports:
- ptrain (ptrain/train/loop.py, the default): GRPO and SFT; old policy "behaviour", "trainer" or "decoupled"; each
  episode scored under its own temperature and top-p; several updates a step; truncated episodes masked; compacted episodes
  (one sequence per segment); --init warm starts; several processes (torchrun); checkpoints `ptrain train export` reads.
- trl (this module; TRL pinned to >=1.16,<1.17, the range tests/test_grpo.py checks the loss against): GRPO only, one
  process, old policy "behaviour" only, one sequence per episode, groups of one size (TRL's `num_generations`), whole
  steps only, one sampling temperature per run (TRL's `temperature`, which divides the logits) and no top-p. Checkpoints are TRL's own (RUN/train/trl/checkpoint-N, the adapter with LoRA); a re-run resumes.

The feed. Groups are selected as ptrain's trainer selects them (`select_grpo`: same filters, same dropped-and-counted
reasons) and ordered as its plan orders them (sorted ids shuffled per epoch with seed * 1000 + epoch, cut into steps
of `groups_per_step`), so both trainers take the same groups at every step. The dataset has one row per (step, group)
in that order, the group id as its prompt; TRL's sampler (shuffle off) repeats each row `num_generations` times, and
`rollout_func`, instead of generating, returns each requested sample's stored episode: prompt_ids (the tokens before
the first model token), completion_ids (the rest), logprobs (behaviour logprobs, 0 off the loss mask), env_mask
(TRL's tool mask: 0 on tool output inside the completion), and its verdict reward as an extra field that the reward
function hands back. TRL recomputes the advantages from them (scale_rewards "group" = "grpo", "none" = "drgrpo").

Behaviour logprobs. TRL 1.16 keeps a rollout_func's logprobs as `sampling_per_token_logps`, but its loss reads them
only with vLLM (importance-sampling correction) or the off-policy mask: otherwise the old policy is the trainer itself
(ratio 1) and `delta` caps nothing. So `StoreGRPOTrainer` hands them to the loss as `old_per_token_logps`, and TRL's
loss is then ptrain's "behaviour" mode (as tests/test_grpo.py checks it: token = "dapo", sequence = "grpo", constant =
"dr_grpo", delta = is_cap). ptrain's "trainer" mode is TRL's vLLM importance-sampling correction: refused without vLLM.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections import Counter
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np
import torch

from ptrain.engine.models import resolve_model
from ptrain.errors import ConfigError
from ptrain.store import Store
from ptrain.train.batch import Selection, Sequence
from ptrain.train.config import TrainConfig
from ptrain.train.loop import TrainError, epoch_order, select_from_store

log = logging.getLogger("ptrain.train")

TRL_VERSIONS = ">=1.16,<1.17"
LOSS_TYPES = {"token": "dapo", "sequence": "grpo", "constant": "dr_grpo"}


def check_trl() -> str:
    """The installed TRL version, if it is in the tested range; a ConfigError naming it otherwise."""
    from packaging.specifiers import SpecifierSet

    fix = f'pip install "trl{TRL_VERSIONS}", or use --trainer ptrain'
    try:
        installed = version("trl")
    except PackageNotFoundError:
        raise ConfigError(f"--trainer trl needs trl{TRL_VERSIONS}, and trl is not installed", fix=fix) from None
    if installed not in SpecifierSet(TRL_VERSIONS):
        raise ConfigError(f"--trainer trl is tested with trl{TRL_VERSIONS}; trl {installed} is installed", fix=fix)
    return installed


def check_config(cfg: TrainConfig) -> None:
    """What TRL's GRPOTrainer cannot do from a store, refused before anything loads."""
    fix = "use --trainer ptrain, which does this"
    if cfg.algo != "grpo":
        raise ConfigError(f"--trainer trl runs TRL's GRPOTrainer: algo {cfg.algo!r} is ptrain's only", fix=fix)
    if cfg.old_policy == "decoupled":
        raise ConfigError('--trainer trl: TRL\'s GRPOTrainer has no decoupled objective (a proximal policy per step '
                          "apart from the behaviour policy)", fix=fix + ', or old_policy "behaviour"')  # fmt: skip
    if cfg.old_policy != "behaviour":
        raise ConfigError('--trainer trl: old_policy "trainer" is TRL\'s vLLM importance-sampling correction, '
                          "which TRL does only while generating with vLLM", fix=fix + ', or old_policy "behaviour"')  # fmt: skip
    if cfg.init:
        raise ConfigError("--trainer trl cannot start from a ptrain checkpoint (--init)", fix=fix)
    if cfg.mask_truncated or cfg.updates_per_step > 1:
        raise ConfigError("--trainer trl: mask_truncated and updates_per_step are ptrain's trainer's", fix=fix)
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise ConfigError("--trainer trl runs in one process (each rank would replay the same samples)", fix=fix)


@dataclass(frozen=True)
class Sample:
    """One stored episode as TRL takes it: prompt and completion, behaviour logprobs, tool mask, reward."""

    prompt_ids: list[int]
    completion_ids: list[int]
    logprobs: list[float]
    env_mask: list[int]
    reward: float
    temperature: float = 1.0
    top_p: float = 1.0

    @classmethod
    def of(cls, seq: Sequence, reward: float) -> Sample:
        start = int(np.argmax(seq.mask))  # the first model token; select_grpo keeps only sequences that have one
        mask = seq.mask[start:].astype(bool)
        logprobs = np.nan_to_num(np.where(mask, seq.logprobs[start:], 0.0), nan=0.0)
        return cls(seq.token_ids[:start].tolist(), seq.token_ids[start:].tolist(), logprobs.tolist(),
                   mask.astype(int).tolist(), float(reward), seq.temperature, seq.top_p)  # fmt: skip


@dataclass
class Plan:
    samples: dict[str, list[Sample]]  # by group id, in sample order
    steps: list[list[str]]  # the group ids of each optimizer step
    selections: dict[str, Selection]  # every group's, as select_grpo made it (with what it dropped, and why)
    left_out: Counter  # what TRL cannot take that ptrain would: reported with the first step
    temperature: float = 1.0  # the one sampling temperature of every sample (TRL divides the logits by it)


def plan(store: Store, cfg: TrainConfig) -> Plan:
    """ptrain's selection and order of the store's groups, as TRL can take them."""
    selections = select_from_store(store, cfg)  # a first run: policy version 0
    samples: dict[str, list[Sample]] = {}
    for group_id, sel in selections.items():
        if not sel.groups:
            continue
        (seqs,) = sel.groups
        if len({s.episode_id for s in seqs}) < len(seqs):
            raise ConfigError(f"group {group_id} has compacted episodes (several segments each); TRL's GRPOTrainer "
                              "takes one prompt and completion per sample", fix="use --trainer ptrain")  # fmt: skip
        samples[group_id] = [Sample.of(s, r) for s, r in zip(seqs, sel.rewards, strict=True)]
    left_out = Counter()
    if samples:  # TRL's num_generations is one number: the most common group size (ties: the larger)
        size = max(Counter(len(s) for s in samples.values()).items(), key=lambda kv: (kv[1], kv[0]))[0]
        for group_id in [g for g, s in samples.items() if len(s) != size]:
            del samples[group_id]
            left_out[f"groups of another size than {size} (TRL's num_generations)"] += 1
    temperature = sampling_temperature([s for group in samples.values() for s in group])
    usable = sorted(samples)
    per_step = min(cfg.groups_per_step, len(usable)) or 1
    steps = []
    for epoch in range(cfg.epochs):  # as Trainer.plan orders an epoch; TRL takes only whole steps
        order = epoch_order(usable, cfg.seed, epoch)
        steps += [order[i : i + per_step] for i in range(0, len(order) - per_step + 1, per_step)]
        if len(order) % per_step:
            left_out["groups past the last whole step of an epoch (TRL takes whole steps)"] += len(order) % per_step
    steps = steps[: cfg.max_steps] if cfg.max_steps else steps
    dropped = sum((s.dropped for s in selections.values()), Counter()) + left_out
    if dropped:
        log.warning("train (trl): left out %s", ", ".join(f"{n} {why}" for why, n in dropped.most_common()))
    if not steps:
        raise TrainError(f"nothing to train on in {store.path}: {len(selections)} groups, none with signal",
                         fix="run `ptrain rollout` and `ptrain verify` first; a GRPO group needs different rewards")  # fmt: skip
    return Plan(samples, steps, selections, left_out, temperature)


def sampling_temperature(samples: list[Sample]) -> float:
    """The temperature TRL's loss divides the logits by: one for the whole run, and no top-p (TRL scores the
    full tempered distribution, not a renormalised nucleus); anything else is refused, naming what to do."""
    fix = "use --trainer ptrain, which scores each episode under its own temperature and top-p"
    if any(s.top_p < 1 for s in samples):
        raise ConfigError("--trainer trl: some episodes were sampled with top_p < 1, and TRL's loss scores the "
                          "whole tempered distribution, not the nucleus they were drawn from", fix=fix)  # fmt: skip
    temperatures = sorted({s.temperature for s in samples})
    if len(temperatures) > 1:
        raise ConfigError(f"--trainer trl takes one sampling temperature per run; the episodes have {temperatures}",
                          fix=fix + ", or train on one temperature's episodes")  # fmt: skip
    return temperatures[0] if temperatures else 1.0


def trainer_class():
    """GRPOTrainer whose loss takes the stored behaviour logprobs as the old policy, and which adds up its loss."""
    from trl import GRPOTrainer

    class StoreGRPOTrainer(GRPOTrainer):
        step_loss = 0.0

        def _generate_and_score_completions(self, inputs):
            out = super()._generate_and_score_completions(inputs)
            mask = out["completion_mask"] * out.get("tool_mask", 1)
            behaviour = out["sampling_per_token_logps"].nan_to_num(0.0)
            out["old_per_token_logps"] = torch.where(mask.bool(), behaviour, torch.zeros_like(behaviour))
            return out

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            loss = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            self.step_loss += float(loss.detach())  # each micro-batch's share: they sum to the step's loss
            return loss

    return StoreGRPOTrainer


def grpo_config(cfg: TrainConfig, out: Path, group_size: int, per_step: int, max_len: int, steps: int,
                temperature: float = 1.0):  # fmt: skip
    from trl import GRPOConfig

    batch = per_step * group_size  # samples per optimizer step, cut into micro-batches of about micro_batch_tokens
    micro = max([d for d in range(1, batch + 1) if batch % d == 0 and d * max_len <= cfg.micro_batch_tokens] or [1])
    cpu = cfg.device == "cpu" or (cfg.device == "auto" and not torch.cuda.is_available())
    return GRPOConfig(
        output_dir=str(out), report_to=["tensorboard"] if cfg.tensorboard else "none", use_cpu=cpu,
        bf16=cfg.compute_dtype(cpu) == "bfloat16", model_init_kwargs={"dtype": "float32"},  # master weights
        activation_checkpointing=cfg.gradient_checkpointing, seed=cfg.seed, shuffle_dataset=False,
        learning_rate=cfg.learning_rate, weight_decay=cfg.weight_decay, lr_scheduler_type=cfg.schedule,
        warmup_steps=cfg.warmup_steps, max_grad_norm=cfg.max_grad_norm, max_steps=steps,
        per_device_train_batch_size=micro, gradient_accumulation_steps=batch // micro, num_generations=group_size,
        max_completion_length=cfg.micro_batch_tokens,  # dr_grpo's constant, as ptrain's "constant" aggregation
        epsilon=cfg.clip_low, epsilon_high=cfg.clip_high, delta=cfg.is_cap, loss_type=LOSS_TYPES[cfg.aggregation],
        importance_sampling_level=cfg.ratio_level, beta=cfg.kl_beta, use_bias_correction_kl=False,
        scale_rewards="group" if cfg.advantage == "grpo" else "none", temperature=temperature,
        logging_steps=1, save_strategy="steps", save_steps=cfg.save_every, save_total_limit=cfg.keep_checkpoints,
        disable_tqdm=True,
    )  # fmt: skip


def train_with_trl(run: Path, store: Store, cfg: TrainConfig) -> list[dict]:
    """Train with TRL's GRPOTrainer on the store's groups; one metrics row per optimizer step (as ptrain's)."""
    check_config(cfg)
    check_trl()
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # rollout_func is experimental in TRL 1.16
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import PrinterCallback, TrainerCallback
    from transformers.trainer_utils import get_last_checkpoint

    from ptrain.train.checkpoint import seed_everything

    run = Path(run)
    p = plan(store, cfg)
    samples, steps = p.samples, p.steps
    group_size = len(next(iter(samples.values())))
    max_len = max(len(s.prompt_ids) + len(s.completion_ids) for group in samples.values() for s in group)
    out = run / "train" / "trl"
    args = grpo_config(cfg, out, group_size, len(steps[0]), max_len, len(steps), p.temperature)

    def rollout(prompts: list[str], trainer) -> dict[str, list]:
        """The stored samples in place of generation: prompts are group ids, each repeated group_size times."""
        seen, picked = Counter(), []
        for group_id in prompts:
            picked.append(samples[group_id][seen[group_id] % group_size])
            seen[group_id] += 1
        return {"prompt_ids": [s.prompt_ids for s in picked], "completion_ids": [s.completion_ids for s in picked],
                "logprobs": [s.logprobs for s in picked], "env_mask": [s.env_mask for s in picked],
                "ptrain_reward": [s.reward for s in picked]}  # fmt: skip

    def stored_reward(completions, ptrain_reward, **_) -> list[float]:
        return list(ptrain_reward)

    peft = None
    if cfg.lora:
        targets = cfg.lora_targets if cfg.lora_targets == "all-linear" else cfg.lora_targets.split(",")
        peft = LoraConfig(r=cfg.lora_rank, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                          target_modules=targets, task_type="CAUSAL_LM")  # fmt: skip
    seed_everything(cfg.seed)  # as ptrain's Trainer: the same seed, then the same model load and LoRA draw
    trainer = trainer_class()(
        model=str(resolve_model(cfg.model)), reward_funcs=stored_reward, args=args, peft_config=peft,
        train_dataset=Dataset.from_dict({"prompt": [g for step in steps for g in step]}), rollout_func=rollout,
    )  # fmt: skip
    rows: list[dict] = []
    resume = get_last_checkpoint(str(out)) if out.is_dir() else None
    metrics = run / "metrics" / "train_trl.jsonl"
    metrics.parent.mkdir(parents=True, exist_ok=True)
    if metrics.is_file():  # rows after the checkpoint it resumes from are redone
        done = int(resume.rsplit("-", 1)[1]) if resume else 0
        kept = [line for line in metrics.read_text().splitlines() if json.loads(line)["step"] <= done]
        metrics.write_text("".join(line + "\n" for line in kept))

    class Rows(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs):
            self.started, self.cpu, trainer.step_loss = time.monotonic(), time.process_time(), 0.0

        def on_step_end(self, args, state, control, **kwargs):
            self.seconds, self.cpu_s = time.monotonic() - self.started, time.process_time() - self.cpu

        def on_log(self, args, state, control, logs=None, **kwargs):
            if not logs or "loss" not in logs:  # the end-of-training summary
                return
            chunk = steps[state.global_step - 1]
            dropped = sum((p.selections[g].dropped for g in chunk), p.left_out if state.global_step == 1 else Counter())
            seqs = [s for g in chunk for s in samples[g]]
            tokens = sum(len(s.prompt_ids) + len(s.completion_ids) for s in seqs)
            row = {
                "step": state.global_step, "policy_version": state.global_step, "algo": "grpo", "trainer": "trl",
                "loss": trainer.step_loss, "lr": logs.get("learning_rate"), "grad_norm": logs.get("grad_norm", math.nan),
                "groups": len(chunk), "sequences": len(seqs), "model_tokens": sum(sum(s.env_mask) for s in seqs),
                "tokens": tokens, "reward_mean": float(np.mean([s.reward for s in seqs])), "step_s": self.seconds, "step_cpu_s": self.cpu_s,
                "tokens_per_s": tokens / max(self.seconds, 1e-9), "dropped": dict(dropped),
                "time": time.time(), "trl": {k: v for k, v in logs.items() if isinstance(v, int | float)},
            }  # fmt: skip
            rows.append(row)
            with metrics.open("a") as f:
                f.write(json.dumps(row) + "\n")
            log.info("step %d  loss %.4f  reward %.3f  grad %.3f  %.0f tok/s", row["step"], row["loss"],
                     row["reward_mean"], row["grad_norm"], row["tokens_per_s"])  # fmt: skip

    trainer.remove_callback(PrinterCallback)  # its dict per step; ours logs a line
    trainer.add_callback(Rows())
    trainer.train(resume_from_checkpoint=resume)
    return rows
