"""`python -m ptrain_terminal_coding.mutation [--build]`: rebuild mutants.json, then summarize it."""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter

from ptrain.taskpack import Task
from ptrain_terminal_coding.mutation.build import build
from ptrain_terminal_coding.mutation.manifest import load_manifest
from ptrain_terminal_coding.mutation.tasks import tasks_from_manifest


def summary(data: dict, tasks: list[Task]) -> str:
    def count(values) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(Counter(values).items()))

    kept = Counter(m["operator"] for m in data["mutants"])
    lines = [
        f"{len(tasks)} tasks kept of {sum(data['enumerated'].values())} mutants (dropped: "
        + ", ".join(f"{status} {n}" for status, n in sorted(data["dropped"].items()))
        + ")",
        f"projects: {count(t.id.split('/')[1] for t in tasks)}",
        "operators (kept/enumerated): "
        + ", ".join(f"{op} {kept[op]}/{n}" for op, n in sorted(data["enumerated"].items())),
        f"difficulty: {count(t.difficulty for t in tasks)}",
        f"split: {count(t.split for t in tasks)}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    package_doc = sys.modules[__package__].__doc__  # the package's docstring says what the command is about
    parser = argparse.ArgumentParser(
        prog="python -m ptrain_terminal_coding.mutation", description=package_doc.split("\n")[0]
    )
    parser.add_argument("--build", action="store_true", help="test every mutant and rewrite mutants.json")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="test runs in parallel")
    parser.add_argument("--timeout-s", type=float, default=3.0, help="CPU seconds for one run of a project's tests")
    args = parser.parse_args(argv)
    if args.build:
        build(jobs=args.jobs, timeout_s=args.timeout_s)
    data, _ = load_manifest()
    print(summary(data, tasks_from_manifest()))
