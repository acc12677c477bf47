"""A scripted episode: the tool calls a competent agent would make, replayed in a real sandbox.

It exercises the whole sandbox path (file writes, a persistent shell, failing then passing
tests, a workspace tar at the end) without a model, for `ptrain sandbox demo`, the quickstart
and the tests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ptrain.sandbox.container import ExecResult, Sandbox

BUGGY = """def mean(xs):
    return sum(xs) / len(xs) + 1
"""
FIXED = """def mean(xs):
    if not xs:
        raise ValueError("mean of an empty list")
    return sum(xs) / len(xs)
"""
TESTS = """import unittest
from stats import mean


class MeanTest(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(mean([1, 2, 3]), 2)

    def test_empty(self):
        with self.assertRaises(ValueError):
            mean([])


if __name__ == "__main__":
    unittest.main()
"""


@dataclass(frozen=True)
class Step:
    kind: str  # "write" or "bash"
    arg: str  # path or command
    content: str = ""


STEPS = [
    Step("bash", "mkdir -p project && cd project && pwd"),
    Step("write", "project/stats.py", BUGGY),
    Step("write", "project/test_stats.py", TESTS),
    Step("bash", "python3 -m unittest -q 2>&1 | tail -3"),
    Step("write", "project/stats.py", FIXED),
    Step("bash", "python3 -m unittest -q 2>&1 | tail -3; echo tests-exit=${PIPESTATUS[0]}"),
]


@dataclass(frozen=True)
class EpisodeResult:
    observations: list[ExecResult]
    passed: bool
    workspace_tar: bytes


async def run_scripted_episode(
    sandbox: Sandbox, on_step: Callable[[Step, ExecResult | None], None] = lambda s, r: None
) -> EpisodeResult:
    observations = []
    for step in STEPS:
        if step.kind == "write":
            await sandbox.write_file(step.arg, step.content)
            on_step(step, None)
        else:
            result = await sandbox.exec(step.arg, timeout_s=60)
            observations.append(result)
            on_step(step, result)
    passed = observations[-1].ok and "tests-exit=0" in observations[-1].output
    return EpisodeResult(observations, passed, await sandbox.get_tar("/workspace/project"))
