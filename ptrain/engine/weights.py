"""Policy weights as a payload a remote engine can apply: the trainer's LoRA adapter, or all weights.

    payload = policy_payload(trainer.model)      # the trainer's side, after an optimizer step
    apply_payload(engine.module, payload, state)  # an engine's side, inside engine.update_weights

A LoRA payload holds each adapted layer's A and B (float32) and the scaling. The engine's model is
the plain base model, and how a payload is applied depends on the dtype of each adapted weight:

  * float32: merged. The weight is set to base + scaling * B @ A, from a copy of the base weight
    kept on first use: exact to float32 rounding, and generation runs at the base model's speed
    (unmerged, rank 16 on every linear layer of SmolLM2-135M costs 6-17% more per decode step on a CPU).
  * anything narrower (bfloat16, float16): unmerged. A delta of a few optimizer steps is mostly
    below half a bfloat16 step (2^-8 of the weight), so adding it into the weight would round it
    away and the engine would sample from an older policy than the trainer's. The layer instead gets
    a forward hook that adds scaling * B(A(x)) computed in float32, as peft's lora.Linear does on a
    bfloat16 base: the same operations, so the same logprobs as the trainer's peft model.

`state` is the caller's dict, empty at first and kept across payloads, which holds what each adapted
layer needs (its base weight, or its hook); so a payload replaces the one before it instead of piling
up, whatever its rank or its layers. A full-fine-tuning payload is the whole state dict, loaded in
place; it removes any adapter. `adapter_payload` reads a saved peft adapter directory, which is what a
served engine is given (vLLM's load_lora_adapter, and `ptrain serve`'s, which applies it with
`apply_payload`).
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


class Adapter:
    """A LoRA adapter applied unmerged: a forward hook adding scaling * B(A(x)) in float32 to a layer's output.

    As peft's lora.Linear.forward: the input is cast to the adapter's dtype, the sum is taken in float32
    and rounded once to the layer's output dtype."""

    def __init__(self, layer: torch.nn.Module, a: torch.Tensor, b: torch.Tensor, scaling: float):
        device = layer.weight.device
        self.a, self.b, self.scaling = a.to(device, torch.float32), b.to(device, torch.float32), scaling
        self.handle = layer.register_forward_hook(self)

    def __call__(self, layer: torch.nn.Module, args: tuple, result: torch.Tensor) -> torch.Tensor:
        x = args[0].to(self.a.dtype)
        lora = torch.nn.functional.linear(torch.nn.functional.linear(x, self.a), self.b) * self.scaling
        return (result + lora).to(result.dtype)

    def remove(self) -> None:
        self.handle.remove()


def apply_payload(module: torch.nn.Module, payload: dict[str, Any], state: dict[str, Any]) -> None:
    """Load `payload` into a plain (un-adapted) model in place; `state` keeps, for each adapted layer, its
    original weight (merged, float32) or its `Adapter` (unmerged, narrower dtypes)."""
    if payload["kind"] == "full":
        for kept in state.values():
            if isinstance(kept, Adapter):
                kept.remove()
        state.clear()  # the full weights are the base of any later adapter
        module.load_state_dict(payload["state"], strict=False)
        return
    layers = payload["layers"]
    for name in list(state):  # undo the previous payload, so that no layer keeps an old delta
        kept = state[name]
        if isinstance(kept, Adapter):
            kept.remove()
            del state[name]
        elif name not in layers:
            module.get_submodule(name).weight.copy_(kept)
            del state[name]
    for name, pair in layers.items():
        layer = module.get_submodule(name)
        if torch.finfo(layer.weight.dtype).bits < 32:
            state[name] = Adapter(layer, pair["A"], pair["B"], payload["scaling"])
            continue
        original = state.setdefault(name, layer.weight.detach().clone())
        delta = payload["scaling"] * (pair["B"] @ pair["A"])
        layer.weight.copy_(original + delta.to(original.device))
