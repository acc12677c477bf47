"""Run by tests/test_train_ddp.py and tests/test_train_fsdp.py, under torchrun or alone: train a run, then
save what rank 0 sees.

ddp_train.py RUN MODEL_PATH [KEY=VALUE ...]  ->  RUN/rank-<N>.pt (trainable weights, whole: gathered from
the shards under fsdp) and RUN/rank-<N>.json (step losses). KEY=VALUE pairs override the TrainConfig
below (strategy=fsdp, lora=false, max_steps=3, ...), as TOML values.
"""

import json
import sys
import tomllib
from pathlib import Path

import torch

from ptrain.store import Store
from ptrain.train.config import TrainConfig
from ptrain.train.loop import Trainer
from ptrain.train.sharding import full

run, model = Path(sys.argv[1]), sys.argv[2]
overrides = tomllib.loads("\n".join(sys.argv[3:]))
settings = {"groups_per_step": 4, "lora_rank": 4, "lr": 1e-3, "micro_batch_tokens": 128, "tensorboard": False}
cfg = TrainConfig(model=model, **{**settings, **overrides})
trainer = Trainer(cfg, run)
rows = trainer.train(Store(run))
weights = {name: full(p.detach()).clone() for name, p in trainer.model.named_parameters() if p.requires_grad}
torch.save(weights, run / f"rank-{trainer.rank}.pt")
(run / f"rank-{trainer.rank}.json").write_text(json.dumps([r["loss"] for r in rows]))
