"""Run by tests/test_train_ddp.py, under torchrun or alone: train a run, then save this rank's view.

ddp_train.py RUN MODEL_PATH  ->  RUN/rank-<N>.pt (trainable weights) and RUN/rank-<N>.json (step losses)
"""

import json
import sys
from pathlib import Path

import torch

from ptrain.store import Store
from ptrain.train.config import TrainConfig
from ptrain.train.loop import Trainer

run, model = Path(sys.argv[1]), sys.argv[2]
cfg = TrainConfig(model=model, groups_per_step=4, lora_rank=4, lr=1e-3, micro_batch_tokens=128, tensorboard=False)
trainer = Trainer(cfg, run)
rows = trainer.train(Store(run))
weights = {name: p.detach().clone() for name, p in trainer.model.named_parameters() if p.requires_grad}
torch.save(weights, run / f"rank-{trainer.rank}.pt")
(run / f"rank-{trainer.rank}.json").write_text(json.dumps([r["loss"] for r in rows]))
