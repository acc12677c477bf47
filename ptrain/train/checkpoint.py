"""Training checkpoints: written whole or not at all, found again after a crash, and the RNG they carry.

    RUN/train/checkpoints/step-000010/
        adapter/ (LoRA, safetensors) or model/ (full fine-tuning; ddp only)
        sharded/     fsdp: every rank's shards, model/ and optimizer/ (torch.distributed.checkpoint)
        trainer.pt   optimizer (ddp), LR schedule, RNG states
        state.json   step, policy version, data position (epoch, order, position; online: round), config

A checkpoint is assembled in `step-N.partial/` and renamed into place, so `complete_checkpoints`
never returns a half-written one; the newest `keep` are kept.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ptrain.train.model import load_weights, save_weights


def weights_dir(model, checkpoint: Path) -> Path:
    return checkpoint / ("adapter" if hasattr(model, "peft_config") else "model")


def partial_dir(final: Path) -> Path:
    """Where the checkpoint `final` is assembled before it is renamed into place."""
    return final.with_name(final.name + ".partial")


def write_checkpoint(final: Path, model, trainer_state: dict[str, Any], state: dict[str, Any], keep: int,
                     sharded: Path | None = None, adapter: dict[str, torch.Tensor] | None = None) -> Path:  # fmt: skip
    """The checkpoint, whole or not at all. `sharded`: the partial directory the ranks' shards are already in
    (then the weights are not saved here, but for LoRA the gathered `adapter`)."""
    tmp = partial_dir(final)
    if sharded is None:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        save_weights(model, weights_dir(model, tmp))
    elif adapter is not None:
        model.save_pretrained(weights_dir(model, tmp), state_dict=adapter, safe_serialization=True)
    torch.save({**trainer_state, "rng": rng_state()}, tmp / "trainer.pt")
    (tmp / "state.json").write_text(json.dumps(state, indent=1))
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    for old in complete_checkpoints(final.parent)[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def read_latest(directory: Path, model, sharded: bool = False) -> dict[str, Any] | None:
    """The newest complete checkpoint's state (with "path"), its weights loaded into `model` (not under
    `sharded`: the caller reads the shards); None if none."""
    from ptrain.errors import ConfigError

    found = complete_checkpoints(directory)
    if not found:
        return None
    state = json.loads((found[-1] / "state.json").read_text())
    written = state.get("strategy", "ddp")
    if written != ("fsdp" if sharded else "ddp"):
        raise ConfigError(f"{found[-1]} was written with strategy {written}; this run trains with "
                          f"{'fsdp' if sharded else 'ddp'}", fix=f"resume with strategy = \"{written}\"")  # fmt: skip
    if not sharded:
        load_weights(model, weights_dir(model, found[-1]))
    return {**state, "path": found[-1]}


def read_trainer_state(checkpoint: Path) -> dict[str, Any]:
    """Optimizer and schedule state dicts; the RNG states are restored as they are read."""
    saved = torch.load(checkpoint / "trainer.pt", weights_only=False)
    set_rng_state(saved.pop("rng"))
    return saved


def checkpoint_of(path: Path) -> Path:
    """`path` if it is a checkpoint, else the latest complete checkpoint of the training run at `path`."""
    from ptrain.errors import ConfigError

    if (path / "state.json").is_file():
        return path
    found = complete_checkpoints(path / "train" / "checkpoints")
    if not found:
        raise ConfigError(f"{path} is neither a checkpoint nor a run with checkpoints",
                          fix=f"train first (ptrain train {path}) or pass a checkpoint directory")  # fmt: skip
    return found[-1]


def complete_checkpoints(directory: Path) -> list[Path]:
    """Checkpoints with their state written, oldest first (a .partial one is an interrupted save)."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.glob("step-*") if p.is_dir() and (p / "state.json").is_file())


def trim(path: Path, keep) -> None:
    """Drop the rows of a metrics file that a resumed run is about to redo."""
    if path.is_file():
        rows = [line for line in path.read_text().splitlines() if line and keep(json.loads(line))]
        path.write_text("".join(r + "\n" for r in rows))


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def rng_state() -> dict:
    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}


def set_rng_state(state: dict) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
