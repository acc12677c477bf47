"""What a rollout schedules: one (task, sample) at a time, named so that every run names it the same.

`Rollout.plan` turns the taskpack's tasks into `Work`, one per sample still to produce. Its group id
(`group_id_of`) and each attempt's sampling seed (`episode_seed`) are hashes of what identifies
them, never counters: a resumed run, or a worker elsewhere, gives the same task at the same policy
version the same GRPO group, and the same sample and attempt the same seed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ptrain.taskpack import Task


@dataclass(frozen=True)
class Work:
    task: Task
    sample_index: int
    group_id: str
    prior_errors: int = 0  # infrastructure errors stored for this (task, sample) by earlier runs


def group_id_of(taskpack: str, task_id: str, policy_version: int) -> str:
    """Stable across resumes: the same task at the same policy version is the same group."""
    digest = hashlib.sha256(f"{taskpack}\0{task_id}\0{policy_version}".encode()).hexdigest()[:16]
    return f"{task_id}@p{policy_version}-{digest}"


def episode_seed(base: int, task_id: str, sample_index: int, attempt: int) -> int:
    """A per-episode sampling seed: reproducible, different for every sample and retry."""
    digest = hashlib.sha256(f"{base}\0{task_id}\0{sample_index}\0{attempt}".encode()).digest()
    return int.from_bytes(digest[:4], "big") * 1000  # room for the loop's per-turn offsets
