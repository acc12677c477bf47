"""The `hf` engine in a process of its own: a private `ptrain serve`, talked to as the `openai` engine.

Why. Python threads share one interpreter lock. In process, the `hf` engine's decode loop runs
beside the scheduler's event loop, podman-py's client threads and the sandboxes' output readers; with
dozens of episodes in flight they hold the lock often enough to stall the engine between its forward
passes (a thread running Python 2 ms of every 6 ms cut the engine's decode rate by about 40%, see
docs/performance.md). In a child process the engine has an interpreter to itself, as
a vLLM server would; a request costs one localhost HTTP round trip.

    engine = LocalServerEngine.start("smollm2-135m", {"max_batch": 16, "dtype": "bfloat16"}, tokenizer)
    done = await engine.generate(prompt_ids, Sampling(max_new_tokens=64))
    engine.stats()   # the child engine's own counters (forward-pass busy time, decode steps), from /metrics
    await engine.close()   # stops the child

The child listens on 127.0.0.1 on a free port and inherits this process's CPU affinity. The kernel
sends it SIGTERM when the thread that started it ends (PR_SET_PDEATHSIG), so a killed rollout leaves
no server behind: start it from a thread that lives as long as the engine (the main thread, or a
pool's). It cannot share weights with a trainer in this process: online training keeps the
in-process engine.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ptrain.engine.base import EngineStats
from ptrain.engine.openai import OpenAIEngine
from ptrain.errors import EngineError

START_TIMEOUT_S = 300.0  # loading the model, and converting the packaged one on first use
STOP_TIMEOUT_S = 20.0
PR_SET_PDEATHSIG = 1  # prctl(2): the signal this process gets when its parent dies


class LocalServerEngine(OpenAIEngine):
    """An `openai` engine whose server is a child `ptrain serve` it started and stops; `stats()` are the child's."""

    def __init__(self, process: subprocess.Popen, log_path: Path, base_url: str, **options: Any):
        super().__init__(base_url, **options)
        self.name = "hf"  # what generates is the hf engine, only elsewhere
        self.process, self.log_path = process, log_path
        self._last = EngineStats()

    @classmethod
    def start(cls, model: str, options: Mapping[str, Any], tokenizer: Any = None) -> LocalServerEngine:
        """Start `ptrain serve` for `model` with the hf engine's `options` (max_batch, kv_budget_tokens,
        threads, dtype), wait until it listens, and connect to it."""
        flags = [f"--{key.replace('_', '-')}={value}" for key, value in options.items() if value]
        argv = [sys.executable, "-m", "ptrain.cli", "serve", "--model", model, "--served-name", model, "--port", "0"]
        log_dir = Path(tempfile.mkdtemp(prefix="ptrain-serve-"))
        log_path = log_dir / "serve.log"
        with log_path.open("w") as out:
            process = subprocess.Popen(
                [*argv, *flags],
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "500"},
                preexec_fn=_stop_with_parent,
            )
        url = _wait_for_url(process, log_path)
        return cls(process, log_path, url, model=model, tokenizer=tokenizer)  # served as the name the user gave

    def stats(self) -> EngineStats:
        """The child engine's counters, fetched now (a localhost round trip); the last ones if it does not answer."""
        try:
            with urllib.request.urlopen(self.base_url.removesuffix("/v1") + "/metrics", timeout=2) as response:
                fields = json.loads(response.read())
            fields.pop("policy_version", None)
            self._last = EngineStats(**fields)
        except (OSError, ValueError, TypeError):
            pass  # the server is gone or busy: generate() reports that; progress shows the last figures
        return self._last

    async def close(self) -> None:
        await super().close()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # serve finishes cleanly on SIGTERM
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log_path.unlink(missing_ok=True)
        self.log_path.parent.rmdir()


def _stop_with_parent() -> None:  # runs in the child before exec
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _wait_for_url(process: subprocess.Popen, log_path: Path) -> str:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        found = re.search(r"http://127\.0\.0\.1:\d+/v1", log_path.read_text(errors="replace"))
        if found:
            return found.group(0)
        if process.poll() is not None:
            break
        time.sleep(0.1)
    if process.poll() is None:
        process.kill()
        process.wait()
    tail = log_path.read_text(errors="replace")[-2000:]
    log_path.unlink()
    log_path.parent.rmdir()
    raise EngineError(
        f"the hf engine's server process did not start (exit status {process.returncode}); its output:\n{tail}",
        fix="run `ptrain serve --model M` alone to see why, or use the engine in process (hf_process = false)",
    )
