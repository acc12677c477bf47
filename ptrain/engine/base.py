"""The engine contract: token ids in, sampled token ids and their logprobs out.

Every engine (`hf` in-process transformers, `openai` over HTTP) is an object with this shape; the
episode loop and the scheduler know nothing else about it. Engines are asyncio-native: `generate`
is a coroutine, and an engine batches whatever requests are pending at once.

    engine = HFEngine.load(resolve_model("smollm2-135m"))
    done = await engine.generate(prompt_ids, Sampling(max_new_tokens=256, stop_token_ids=(2,)))
    done.token_ids, done.logprobs, done.finish_reason, done.policy_version

Logprobs are those of the distribution the token was sampled from (the logits divided by the
temperature, renormalised over the top-p nucleus: `ptrain.engine.sampling.processed_logprobs`),
which the trainer recomputes with each episode's temperature and top-p as the old policy.
An engine that fails raises `EngineError`: an infrastructure failure, never the model's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ptrain.errors import ConfigError

# the weights' dtypes an in-process engine loads a model in; "auto" keeps the checkpoint's. bfloat16 on a
# CPU with AMX or AVX512-BF16 runs this project's default model about 1.5x faster a decode step and 3.5x
# faster a prefill than float32 (see docs/performance.md)
DTYPES = ("auto", "float32", "bfloat16", "float16")

FINISH_REASONS = ("stop", "length")  # stopped on a stop token (included in token_ids) / hit max_new_tokens


@dataclass(frozen=True)
class Sampling:
    max_new_tokens: int = 512
    temperature: float = 1.0  # 0 is greedy (logprobs then of the untempered distribution)
    top_p: float = 1.0
    stop_token_ids: tuple[int, ...] = ()
    seed: int | None = None  # per request; None draws from the engine's generator
    task_id: str = ""  # the episode's task: samplers ignore it; the gold engine replays that task's calls

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ConfigError(f"max_new_tokens is {self.max_new_tokens}; it must be at least 1")
        if self.temperature < 0 or not 0 < self.top_p <= 1:
            raise ConfigError(f"temperature {self.temperature} must be >= 0 and top_p {self.top_p} in (0, 1]")


@dataclass(frozen=True)
class Completion:
    token_ids: tuple[int, ...]
    logprobs: tuple[float, ...]  # one per token in token_ids
    finish_reason: str  # one of FINISH_REASONS
    policy_version: int  # the weights that sampled it
    prompt_tokens: int
    queued_s: float = 0.0  # waiting for admission (KV budget, batch slots)
    generate_s: float = 0.0  # from admission to the last token
    text_mode: bool = False  # the server gave back text only: token ids are ours, logprobs unknown (NaN)


@dataclass
class EngineStats:
    """Counters since the engine started; the scheduler differences two snapshots."""

    busy_s: float = 0.0  # time spent running the model (forward passes), or with a request in flight
    requests: int = 0
    prompt_tokens: int = 0
    generated_tokens: int = 0
    peak_batch: int = 0
    waiting: int = 0  # requests queued now, not yet admitted
    running: int = 0  # requests being generated now
    extra: dict[str, float] = field(default_factory=dict)


@runtime_checkable
class Engine(Protocol):
    name: str  # "hf", "openai"
    model: str  # what the model is, for the episode row
    policy_version: int
    context_window: int  # the most tokens a sequence (prompt + completion) may hold

    async def generate(self, token_ids: Sequence[int], sampling: Sampling) -> Completion: ...

    def stats(self) -> EngineStats: ...

    async def close(self) -> None: ...
