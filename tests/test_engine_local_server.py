"""The hf engine in a process of its own (`LocalServerEngine`): a real child `ptrain serve` with the
default model. Its completions are the in-process engine's, its stats are the child engine's own,
closing it stops the child, a child that cannot start is a clear EngineError, and a parent that is
killed takes the child with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from ptrain.engine.base import Sampling
from ptrain.engine.local_server import LocalServerEngine
from ptrain.errors import EngineError
from ptrain.rollout.chat import ChatFormat


@pytest.fixture(scope="module")
def prompt(tokenizer) -> list[int]:
    return ChatFormat(tokenizer).prompt_ids("You are a helpful assistant.", "Name three colours.", [])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is gone but for its parent's wait
        return stat.read().split(") ")[-1][0] != "Z"


async def test_greedy_completions_equal_the_in_process_engine_and_stats_are_the_childs(model_path, tokenizer, prompt):
    from ptrain.engine.hf import HFEngine

    greedy = Sampling(max_new_tokens=8, temperature=0)
    engine = LocalServerEngine.start(str(model_path), {"max_batch": 4, "threads": 1}, tokenizer)
    try:
        assert (engine.name, engine.model, engine.context_window) == ("hf", str(model_path), 8192)
        remote = await engine.generate(prompt, greedy)
        stats = engine.stats()
    finally:
        await engine.close()
    local_engine = HFEngine.load(model_path, max_batch=4)
    try:
        local = await local_engine.generate(prompt, greedy)
    finally:
        await local_engine.close()
    assert remote.token_ids == local.token_ids
    assert remote.logprobs == pytest.approx(local.logprobs, abs=1e-4)
    # the child engine's counters: forward-pass time and decode steps, which only the hf engine keeps
    assert stats.requests == 1 and stats.generated_tokens == 8 and stats.prompt_tokens == len(prompt)
    assert stats.busy_s > 0 and stats.extra["decode_steps"] == 7
    assert engine.process.returncode == 0  # stopped cleanly on SIGTERM
    assert not engine.log_path.parent.exists()


def test_a_child_that_cannot_start_is_an_engine_error_with_its_output():
    with pytest.raises(EngineError, match="did not start") as caught:
        LocalServerEngine.start("no-such-model", {})
    assert "no-such-model" in str(caught.value)


def test_a_killed_parent_takes_its_engine_process_with_it(model_path, tmp_path):
    script = textwrap.dedent(f"""
        from ptrain.engine.local_server import LocalServerEngine
        engine = LocalServerEngine.start({str(model_path)!r}, {{"threads": 1}})
        print(engine.process.pid, flush=True)
        import time; time.sleep(600)
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        child = int(parent.stdout.readline())
        assert alive(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 30
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not alive(child)
    finally:
        if parent.poll() is None:
            parent.kill()
