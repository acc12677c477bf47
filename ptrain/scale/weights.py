"""Policy weights as a payload a remote engine can apply: the trainer's LoRA adapter, or all weights.

    payload = policy_payload(trainer.model)      # the trainer's side, after an optimizer step
    apply_payload(engine.module, payload, base)  # an engine's side, inside engine.update_weights

A LoRA payload holds each adapted layer's A and B and the scaling. The engine's model is the plain
base model: applying a payload sets each adapted weight to base + scaling * B @ A, from a copy of the
base weight kept on first use (`base`), so payloads of later steps replace earlier ones instead of
piling up. Generation then runs at the base model's speed, with no adapter in the forward pass.
A full-fine-tuning payload is the whole state dict, loaded in place. `adapter_payload` reads a
saved peft adapter directory, which is what a served engine is given (vLLM's load_lora_adapter,
and `ptrain serve`'s, which applies it with `apply_payload`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

PEFT_PREFIX = "base_model.model."


def policy_payload(model: torch.nn.Module) -> dict[str, Any]:
    """The trainable policy's weights, on the CPU, ready for Ray's object store."""
    if not hasattr(model, "peft_config"):
        return {"kind": "full", "state": {k: v.detach().cpu() for k, v in model.state_dict().items()}}
    from peft import get_peft_model_state_dict

    config = model.peft_config["default"]
    scaling = _scaling(config.r, config.lora_alpha, config.use_rslora)
    return {"kind": "lora", "scaling": scaling, "layers": _layers(get_peft_model_state_dict(model))}


def adapter_payload(directory: Path) -> dict[str, Any]:
    """A LoRA payload from a peft adapter directory (adapter_config.json, adapter_model.safetensors)."""
    from safetensors.torch import load_file

    config = json.loads((directory / "adapter_config.json").read_text())
    scaling = _scaling(config["r"], config["lora_alpha"], config.get("use_rslora", False))
    return {"kind": "lora", "scaling": scaling, "layers": _layers(load_file(directory / "adapter_model.safetensors"))}


def _scaling(r: int, alpha: float, rslora: bool) -> float:
    """LoRA's factor on B @ A: alpha / r, or alpha / sqrt(r) for rank-stabilised LoRA."""
    return alpha / (r**0.5 if rslora else r)


def _layers(state: dict[str, torch.Tensor]) -> dict[str, dict[str, torch.Tensor]]:
    """peft's adapter tensors (`base_model.model.<layer>.lora_A.weight`) as {layer: {"A": .., "B": ..}}."""
    layers: dict[str, dict[str, torch.Tensor]] = {}
    for key, value in state.items():
        name, _, part = key.removeprefix(PEFT_PREFIX).rpartition(".lora_")
        if part not in ("A.weight", "B.weight"):
            raise ValueError(f"unexpected adapter tensor {key}: only LoRA A and B weights can be delivered")
        layers.setdefault(name, {})[part[0]] = value.detach().float().cpu()
    return layers


def apply_payload(module: torch.nn.Module, payload: dict[str, Any], base: dict[str, torch.Tensor]) -> None:
    """Load `payload` into a plain (un-adapted) model in place; `base` keeps the original weights it adapted."""
    if payload["kind"] == "full":
        module.load_state_dict(payload["state"], strict=False)
        return
    for name, pair in payload["layers"].items():
        weight = module.get_submodule(name).weight
        if name not in base:
            base[name] = weight.detach().clone()
        original = base[name]
        delta = payload["scaling"] * (pair["B"] @ pair["A"])
        weight.copy_((original.float() + delta.to(original.device)).to(weight.dtype))
