"""How the ranks share a training step: `ddp`, a whole replica on every rank, or `fsdp`, each rank a shard.

    strategy = "ddp"    every rank holds all weights, gradients and optimizer state; after the
                        backward passes the gradients are summed in one flat all-reduce (step.py).
                        Simple and fast while the model fits on one device (LoRA of a 7B model).
    strategy = "fsdp"   FSDP2 (`torch.distributed.fsdp.fully_shard`) on every decoder layer and on
                        the root: each rank keeps 1/N of the weights, gradients and Adam state; a
                        layer's weights are all-gathered just before it runs and freed after, and
                        its gradients reduce-scattered as the backward pass leaves it. Full
                        fine-tuning of a model N times larger than one device holds.

Precision is the same in both: the weights the optimizer updates (the master copy) are float32,
and `dtype` is the dtype the forward and backward passes compute in ("auto": bfloat16 on a GPU,
float32 on a CPU). Under ddp the bfloat16 compute is autocast; under fsdp it is FSDP2's
`MixedPrecisionPolicy`: bfloat16 copies of the gathered weights, gradients reduced in float32.
Updating bfloat16 weights directly would round most updates of a small learning rate to nothing.
Under LoRA only the adapters are updated: they are float32, the frozen base is loaded in the
compute dtype (a 7B model's base is 15 GB in bfloat16, not 30).

The forward pass goes through the root module: `Scorer` (ptrain/train/model.py) wraps the policy,
so FSDP2's root hooks gather the embedding, final norm and output layer that the layers' own units
leave over. Every FSDP forward and backward is a collective, so under fsdp each rank runs the same
number of micro-batches in an update (step.py pads a rank that has fewer with zero-weight ones),
and the shared-prefix computation is off (it calls the layers twice, a different number of
collectives on ranks whose micro-batches share a prefix and ranks whose do not).

A sharded checkpoint is written with `torch.distributed.checkpoint`: every rank writes its own
shards of the trainable weights and of the optimizer state into one directory, each rank reading
its own back on resume (tested with the same number of ranks). A LoRA run also writes the whole adapter (small, gathered), so
`--init`, the engines and `ptrain train export` read it as they read a replica's; for full
fine-tuning `export` assembles the shards into a plain transformers checkpoint.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import torch

STRATEGIES = ("ddp", "fsdp")
SHARDED_DIR = "sharded"  # a checkpoint's torch.distributed.checkpoint directory (fsdp)


def ensure_process_group(device: torch.device) -> None:
    """FSDP2 needs a process group even for one process: outside torchrun, one of size 1 (gloo or NCCL)."""
    import torch.distributed as dist

    if dist.is_initialized():
        return
    store = Path(tempfile.mkdtemp(prefix="ptrain-pg-")) / "store"
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo", init_method=f"file://{store}", rank=0,
                            world_size=1)  # fmt: skip


def decoder_layers(policy) -> list[torch.nn.Module]:
    """The transformer's blocks, through any peft wrapper: the units FSDP2 shards one by one."""
    inner = policy.get_base_model() if hasattr(policy, "get_base_model") else policy
    layers = getattr(inner.get_decoder(), "layers", None)
    if layers is None:
        from ptrain.errors import ConfigError

        raise ConfigError(f"strategy fsdp: cannot find the decoder layers of {type(inner).__name__}",
                          fix="use strategy = \"ddp\" for this model")  # fmt: skip
    return list(layers)


def shard(scorer: torch.nn.Module, policy, dtype: torch.dtype) -> None:
    """FSDP2 over `scorer` in place: every decoder layer its own unit, the rest (embeddings, norm, head) the root's.

    Gradients are summed over ranks, not averaged: each rank's loss is already divided by the
    update-wide totals (step.py). Forward inputs are not cast (the rows' temperatures and top-p stay float32)."""
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    layer_policy = MixedPrecisionPolicy(param_dtype=dtype, reduce_dtype=torch.float32)
    root_policy = MixedPrecisionPolicy(param_dtype=dtype, reduce_dtype=torch.float32, cast_forward_inputs=False)
    units = decoder_layers(policy)
    for layer in units:
        fully_shard(layer, mp_policy=layer_policy)
    fully_shard(scorer, mp_policy=root_policy)
    for unit in [*units, scorer]:  # each unit reduces its own gradients
        unit.set_gradient_divide_factor(1.0)
        unit.set_force_sum_reduction_for_comms(True)  # gloo has no pre-multiplied sum


def is_sharded(tensor: torch.Tensor) -> bool:
    from torch.distributed.tensor import DTensor

    return isinstance(tensor, DTensor)


def local(tensor: torch.Tensor) -> torch.Tensor:
    """This rank's part of a (possibly sharded) tensor."""
    return tensor.to_local() if is_sharded(tensor) else tensor


def full(tensor: torch.Tensor) -> torch.Tensor:
    """The whole tensor, gathered from every rank if it is sharded (a collective: every rank must call it)."""
    return tensor.full_tensor() if is_sharded(tensor) else tensor


def trainable_state(policy) -> dict[str, torch.Tensor]:
    """The trainable parameters by name (sharded under fsdp), as a checkpoint holds them."""
    return {name: p for name, p in policy.named_parameters() if p.requires_grad}


def save_sharded(directory: Path, scorer: torch.nn.Module, policy, optimizer) -> None:
    """Every rank's shards of the trainable weights and of the optimizer state into `directory`/model and
    /optimizer (all ranks call it; export reads the weights alone)."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

    dcp.save(trainable_state(policy), checkpoint_id=str(directory / "model"))
    dcp.save(get_optimizer_state_dict(scorer, optimizer), checkpoint_id=str(directory / "optimizer"))


def load_sharded(directory: Path, scorer: torch.nn.Module, policy, optimizer=None) -> None:
    """The weights (and with `optimizer` its state) of `save_sharded` back into the sharded model, in place."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict, set_optimizer_state_dict

    dcp.load(trainable_state(policy), checkpoint_id=str(directory / "model"))  # into the shards, in place
    if optimizer is not None:
        state = get_optimizer_state_dict(scorer, optimizer)
        dcp.load(state, checkpoint_id=str(directory / "optimizer"))
        set_optimizer_state_dict(scorer, optimizer, state)


def gathered_weights(directory: Path) -> dict[str, torch.Tensor]:
    """The whole trainable weights of a sharded checkpoint, in one process without a process group (export)."""
    from torch.distributed.checkpoint.format_utils import dcp_to_torch_save

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "weights.pt")
        dcp_to_torch_save(str(directory / "model"), path)
        return torch.load(path, weights_only=False)
