"""The episode loop: one task, one sandbox, one engine, token in and token out.

    ids = prompt (system message with the tools, the task)            mask 0
    repeat:
        completion = await engine.generate(ids)                        mask 1, with its logprobs
        calls = parse(completion); observations = run(calls)           in the sandbox
        ids += tool results + the next generation prompt               mask 0
    until the model submits, or a limit is reached

Nothing is tokenized twice: the engine's ids are kept as sampled, so the trainer scores exactly what
the model produced. A malformed turn (no call, broken JSON, an unknown tool, bad arguments) becomes
an error observation the model reads next turn; a taskpack tool that raises ends the episode as an
infrastructure error (its status says so, and it is never trained on as the model's failure). A
sandbox or engine that fails raises (`SandboxError`, `EngineError`) for the scheduler to retry.

The context budget: every turn must fit the model's window (`context_window`, prompt plus
`max_new_tokens`). When the next turn would not fit, the history is compacted: a new *segment*
starts, rendered from text (the prompt, then the recent turns, with tool outputs older than
`keep_recent_turns` elided). A new segment is not a prefix of the old ids, so the episode records
where each one starts (`segments`) and the trainer scores each segment as its own sequence; in the
new segment the re-rendered history is mask 0 and only newly sampled tokens are mask 1. Each segment
ends with a model turn (the tool result after it moves to the next segment), so each fits the window.

Limits: `max_turns` (status "truncated"), `max_episode_tokens` over all segments ("truncated"),
`max_wall_s` ("timeout"). The optional state note appends the working directory and the files
changed so far to each tool result, so a small model need not remember them.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ptrain.engine.base import Engine, Sampling
from ptrain.errors import EngineError, SandboxError
from ptrain.rollout.chat import DEFAULT_SYSTEM, ChatFormat
from ptrain.rollout.metrics import Meter
from ptrain.rollout.parse import ParsedTurn
from ptrain.sandbox.container import Sandbox
from ptrain.taskpack import Observation, Task, Taskpack, ToolCall
from ptrain.tools import run_tool_call, truncate_middle

ELIDED = "[output of an earlier step elided to fit the context window]"
STATE_MARKER = "/tmp/.ptrain/started"
MIN_TURN_TOKENS = 32  # a turn with less room than this is not worth sampling (unless turns are meant to be short)


@dataclass(frozen=True)
class EpisodeLimits:
    max_turns: int = 20
    max_new_tokens: int = 512  # per model turn
    max_episode_tokens: int = 32768  # every token of every segment
    max_wall_s: float = 900.0
    context_window: int = 0  # 0: the engine's
    keep_recent_turns: int = 2  # compaction keeps these turns' tool outputs whole
    state_note: bool = False


async def _no_wait() -> None:
    return None


@dataclass(frozen=True)
class Pacing:
    """Awaited before each model turn and each round of tools; lock-step mode makes them barriers."""

    before_generate: Callable[[], Awaitable[None]] = _no_wait
    before_tools: Callable[[], Awaitable[None]] = _no_wait


@dataclass
class EpisodeTrace:
    """What one episode did, as the scheduler turns it into a stored `Episode`."""

    token_ids: list[int] = field(default_factory=list)
    loss_mask: list[bool] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    segments: list[int] = field(default_factory=lambda: [0])  # where each segment starts in token_ids
    transcript: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    status: str = "ok"
    finish: str = ""  # submitted, max_turns, max_episode_tokens, context, max_wall_s, tool_crash
    error_type: str = ""
    error_message: str = ""
    turns: int = 0
    turn_end: int = 0  # where the last model turn (with its closing token) ends in token_ids
    policy_versions: list[int] = field(default_factory=list)  # one per model turn
    format_errors: list[str] = field(default_factory=list)  # what was wrong with malformed turns
    text_mode: bool = False  # some turn came back as text only (no token ids): not trainable
    timings: dict[str, float] = field(default_factory=lambda: {"generate_s": 0.0, "tool_s": 0.0, "queued_s": 0.0})

    def extend(self, ids: list[int], model: bool = False, logprobs: tuple[float, ...] = ()) -> None:
        self.token_ids += ids
        self.loss_mask += [model] * len(ids)
        self.logprobs += list(logprobs) if model else [0.0] * len(ids)

    @property
    def segment(self) -> list[int]:
        return self.token_ids[self.segments[-1] :]

    def drop_unseen_tail(self) -> None:
        """Drop the tool result after the last model turn: no model token in this segment follows it."""
        del self.token_ids[self.turn_end :], self.loss_mask[self.turn_end :], self.logprobs[self.turn_end :]

    def end(self, status: str, finish: str, error_type: str = "", message: str = "") -> EpisodeTrace:
        self.status, self.finish, self.error_type, self.error_message = status, finish, error_type, message
        return self


async def run_episode(
    task: Task,
    taskpack: Taskpack,
    sandbox: Sandbox,
    engine: Engine,
    fmt: ChatFormat,
    limits: EpisodeLimits = EpisodeLimits(),
    sampling: Sampling = Sampling(),
    system: str = DEFAULT_SYSTEM,
    pacing: Pacing = Pacing(),
    meter: Meter | None = None,
) -> EpisodeTrace:
    """Run one episode in a sandbox the task is already set up in; the caller collects the artifact."""
    started = time.monotonic()
    meter = meter or Meter()
    tools = taskpack.tools()
    window = limits.context_window or engine.context_window
    trace = EpisodeTrace()
    trace.extend(fmt.prompt_ids(system, task.instruction, tools))
    trace.transcript += [{"role": "system", "content": fmt.system_text(system, tools)},
                         {"role": "user", "content": task.instruction}]  # fmt: skip
    turns: list[tuple[str, str]] = []  # (assistant text, tool text) per turn, for compaction
    compacted_at = 0  # len(turns) at the last compaction: never compact twice without a new turn
    if limits.state_note:
        await sandbox.exec(f"mkdir -p {STATE_MARKER.rsplit('/', 1)[0]} && touch {STATE_MARKER}", timeout_s=10)
    while True:
        if trace.turns >= limits.max_turns:
            if len(trace.segment) > window:
                trace.drop_unseen_tail()
            return trace.end("truncated", "max_turns")
        if time.monotonic() - started > limits.max_wall_s:
            return trace.end("timeout", "max_wall_s")
        if window - len(trace.segment) < min(limits.max_new_tokens, window // 2) and len(turns) > compacted_at:
            _compact(trace, fmt, system, task, tools, turns, window, limits)
            compacted_at = len(turns)
        room, least = _room(trace, window, limits), min(MIN_TURN_TOKENS, limits.max_new_tokens)
        if room < least:
            over = "max_episode_tokens" if limits.max_episode_tokens - len(trace.token_ids) < least else "context"
            if len(trace.segment) > window:
                trace.drop_unseen_tail()
            return trace.end("truncated", over)

        await pacing.before_generate()
        seed = None if sampling.seed is None else sampling.seed + trace.turns
        turn_sampling = replace(sampling, max_new_tokens=room, stop_token_ids=fmt.stop_token_ids, seed=seed)
        t0 = time.monotonic()
        with meter.phase("generate"):
            completion = await engine.generate(trace.segment, turn_sampling)
        trace.timings["generate_s"] += time.monotonic() - t0
        trace.timings["queued_s"] += completion.queued_s
        trace.policy_versions.append(completion.policy_version)
        trace.text_mode |= completion.text_mode
        trace.extend(list(completion.token_ids), model=True, logprobs=completion.logprobs)
        trace.extend(fmt.assistant_suffix_ids(completion.token_ids))
        trace.turns, trace.turn_end = trace.turns + 1, len(trace.token_ids)
        text = fmt.completion_text(completion.token_ids)
        trace.transcript.append({"role": "assistant", "content": text, "finish_reason": completion.finish_reason})

        parsed = fmt.parse(text)
        await pacing.before_tools()
        with meter.phase("tools"):
            t0 = time.monotonic()
            observations, ended = await _run_calls(parsed, tools, sandbox, trace)
            if ended is None and limits.state_note:
                observations.append(Observation(await _state_note(sandbox)))
            trace.timings["tool_s"] += time.monotonic() - t0
        if ended:
            return ended
        tool_text = fmt.tool_text(observations)
        trace.transcript.append({"role": fmt.tool_role, "content": tool_text})
        turns.append((text, tool_text))
        trace.extend(fmt.tool_result_ids(observations))


def _room(trace: EpisodeTrace, window: int, limits: EpisodeLimits) -> int:
    """How many tokens the next turn may sample: the turn limit, the window, the episode's budget."""
    return min(
        limits.max_new_tokens,
        window - len(trace.segment),
        limits.max_episode_tokens - len(trace.token_ids),
    )


def _compact(
    trace: EpisodeTrace,
    fmt: ChatFormat,
    system: str,
    task: Task,
    tools: list,
    turns: list[tuple[str, str]],
    window: int,
    limits: EpisodeLimits,
) -> None:
    """Start a new segment: the prompt and as many recent turns as fit, older tool outputs elided."""
    kept = [(a, t if i >= len(turns) - limits.keep_recent_turns else ELIDED) for i, (a, t) in enumerate(turns)]
    while True:
        ids = fmt.conversation_ids(system, task.instruction, tools, kept)
        if len(ids) + min(limits.max_new_tokens, window // 2) <= window or not kept:
            break
        kept = kept[1:]  # the oldest turn goes entirely
    trace.drop_unseen_tail()
    trace.segments.append(len(trace.token_ids))
    trace.extend(ids)
    trace.transcript.append({"role": "compaction", "content": f"new segment; {len(turns) - len(kept)} turns dropped, "
                             f"{sum(t == ELIDED for _, t in kept)} tool outputs elided"})  # fmt: skip


class _ToolCrash(Exception):
    pass


async def _run_calls(
    parsed: ParsedTurn, tools: list, sandbox: Sandbox, trace: EpisodeTrace
) -> tuple[list[Observation], EpisodeTrace | None]:
    """The turn's calls in order, then its parse errors; the ended trace if a call ends the episode."""
    observations = []
    for call in parsed.calls:
        try:
            observation = await _run_call(tools, call, sandbox, trace)
        except _ToolCrash as crash:
            return observations, trace.end("error", "tool_crash", "ToolError", str(crash))
        observations.append(observation)
        if observation.done:
            return observations, trace.end("ok", "submitted")
    if error := parsed.error_observation():
        observations.append(error)
        trace.format_errors.append(error.content[:300])
    return observations, None


async def _run_call(tools: list, call: ToolCall, sandbox: Sandbox, trace: EpisodeTrace) -> Observation:
    """One call, timed and recorded; a tool that raises something other than ToolError is a _ToolCrash."""
    t0 = time.monotonic()
    record: dict[str, Any] = {"turn": trace.turns, "name": call.name, "arguments": dict(call.arguments)}
    try:
        observation = await run_tool_call(tools, call, sandbox)
    except (SandboxError, EngineError):
        raise
    except Exception as e:
        record.update(is_error=True, crashed=f"{type(e).__name__}: {e}", duration_s=time.monotonic() - t0)
        trace.tool_calls.append(record)
        raise _ToolCrash(f"tool `{call.name}` raised {type(e).__name__}: {e}") from e
    content = truncate_middle(observation.content)
    record.update(is_error=observation.is_error, duration_s=time.monotonic() - t0, output_chars=len(content))
    if observation.is_error:
        record["error"] = content[:300]
    trace.tool_calls.append(record)
    return replace(observation, content=content)


async def _state_note(sandbox: Sandbox) -> str:
    """The shell's working directory and the workspace files changed since the episode began."""
    result = await sandbox.exec(
        f"echo \"$PWD\"; find /workspace -newer {STATE_MARKER} -type f -not -path '*/.git/*' 2>/dev/null | head -21",
        timeout_s=10,
    )
    lines = result.output.splitlines()
    cwd, changed = (lines[0] if lines else "?"), lines[1:]
    more = " (and more)" if len(changed) > 20 else ""
    files = ", ".join(p.removeprefix("/workspace/") for p in changed[:20]) or "none"
    return f"[state] cwd: {cwd}; files changed: {files}{more}"
