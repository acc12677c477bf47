"""Verification: an episode's artifact scored by its taskpack in a fresh sandbox, and the proof
that a taskpack's verifier is right (gold scores 1, doing nothing scores 0, and every adversarial
probe of `ptrain/probes.py` and of the taskpack's own scores 0, for every task).

A verifier that crashes, hangs or returns something that is not a verdict becomes a
`VerifierError`, an infrastructure failure that is recorded and never trained on as if the model
had failed.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ptrain.episode import StoredVerdict, StoreError
from ptrain.errors import PtrainError, SandboxError, ToolError, VerifierError
from ptrain.probes import shared_probes
from ptrain.sandbox.images import ImageSpec
from ptrain.sandbox.pool import PoolSet
from ptrain.store import Store
from ptrain.taskpack import SPLITS, Probe, Task, Taskpack, ToolCall, Verdict, check_task
from ptrain.taskpack import load as load_taskpack
from ptrain.tools import run_tool_call

DEFAULT_VERIFY_TIMEOUT_S = 300.0


def image_of(taskpack: Taskpack, task: Task) -> ImageSpec:
    return task.image or taskpack.image


async def replay(taskpack: Taskpack, task: Task, calls: Sequence[ToolCall], pools: PoolSet) -> bytes:
    """Run known tool calls (gold, or none for a no-op) in a fresh sandbox; return the artifact."""
    async with pools.sandbox(image_of(taskpack, task)) as sandbox:
        await taskpack.setup(task, sandbox)
        tools = taskpack.tools()
        for call in calls:
            observation = await run_tool_call(tools, call, sandbox)
            if observation.done:
                break
        return await taskpack.artifact(task, sandbox)


def verify_timeout_s(task: Task) -> float:
    """How long a verification may take: DEFAULT_VERIFY_TIMEOUT_S, or longer where the task asks
    (`metadata["verify_timeout_s"]`, e.g. an imported task whose own tests run longer)."""
    return max(DEFAULT_VERIFY_TIMEOUT_S, float(task.metadata.get("verify_timeout_s") or 0))


async def verify_artifact(
    taskpack: Taskpack, task: Task, artifact: bytes, pools: PoolSet, timeout_s: float | None = None
) -> Verdict:
    """The taskpack's verdict on `artifact`, from a fresh sandbox, within `timeout_s` (default: the task's)."""
    timeout_s = timeout_s or verify_timeout_s(task)
    async with pools.sandbox(image_of(taskpack, task)) as sandbox:
        try:
            verdict = await asyncio.wait_for(taskpack.verify(task, artifact, sandbox), timeout_s)
        except TimeoutError as e:
            raise VerifierError(f"the {taskpack.name} verifier hung on task {task.id} for {timeout_s:g} s") from e
        except PtrainError:
            raise
        except Exception as e:
            raise VerifierError(
                f"the {taskpack.name} verifier crashed on task {task.id}: {type(e).__name__}: {e}"
            ) from e
    if not isinstance(verdict, Verdict) or not 0.0 <= verdict.reward <= 1.0:
        raise VerifierError(
            f"the {taskpack.name} verifier returned {verdict!r} for {task.id}, not a Verdict with reward in [0, 1]"
        )
    try:
        json.dumps(dict(verdict.details))
    except (TypeError, ValueError) as e:
        raise VerifierError(f"the {taskpack.name} verifier's details for {task.id} are not JSON: {e}") from e
    return verdict


@dataclass(frozen=True)
class CheckResult:
    task: Task
    gold: float | None  # None when the task has no gold solution
    noop: float | None
    problem: str = ""
    probes: dict[str, float] = field(default_factory=dict)  # probe name -> its reward (must be 0)

    @property
    def ok(self) -> bool:
        """Nothing wrong was found (a task without gold can be ok; `status` tells it apart)."""
        return not self.problem and self.gold in (None, 1.0) and self.noop == 0.0 and not any(self.probes.values())

    @property
    def status(self) -> str:
        """ "passed" (gold 1, no-op 0, probes 0), "no gold" (nothing to prove the tests passable) or "failed"."""
        if not self.ok:
            return "failed"
        return "no gold" if self.gold is None else "passed"

    def as_dict(self) -> dict:
        return {"task": self.task.id, "split": self.task.split, "category": self.task.category,
                "difficulty": self.task.difficulty, "status": self.status, "gold": self.gold, "noop": self.noop,
                "probes": self.probes, "problem": self.problem}  # fmt: skip


def failure_reason(details: Mapping, limit: int = 1200) -> str:
    """Why a verdict came out as it did, readably: the verifier's own words (tampered, error, reason),
    else pytest's short summary (its FAILED and ERROR lines, or the assertion's E lines), else the details."""
    parts = [str(details[key]) for key in ("tampered", "error", "reason") if details.get(key)]
    output = details.get("output")
    if isinstance(output, str):
        lines = output.splitlines()
        summary = [line for line in lines if line.startswith(("FAILED ", "ERROR "))]
        summary = summary or [line.strip() for line in lines if line.startswith("E ")]
        if summary:
            parts.append(" | ".join(summary[-8:]))
    if not parts and details.get("failed"):
        parts.append("failed: " + ", ".join(map(str, list(details["failed"])[:10])))
    text = "; ".join(parts) or str(dict(details))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def probes_of(taskpack: Taskpack, task: Task) -> list[Probe]:
    """The shared probes that fit the taskpack's tools, then the taskpack's own."""
    own = taskpack.probes(task) if hasattr(taskpack, "probes") else []
    return shared_probes(task, {tool.name for tool in taskpack.tools()}) + list(own)


async def probe_reward(taskpack: Taskpack, task: Task, probe: Probe, pools: PoolSet) -> tuple[float, str]:
    """A probe replayed as a real episode: its reward, and why when it is 0 before verification
    (a workspace too large or broken to collect is the model's failure, scored 0)."""
    try:
        artifact = await replay(taskpack, task, probe.calls, pools)
    except ToolError as e:
        return 0.0, f"not collected: {e}"
    verdict = await verify_artifact(taskpack, task, artifact, pools)
    return verdict.reward, str(verdict.details.get("tampered") or verdict.details.get("reason") or "")


async def check_one(
    taskpack: Taskpack, task: Task, pools: PoolSet, probes: bool = True, only: Sequence[str] = ()
) -> CheckResult:
    """Gold must score 1, a no-op 0 and every probe 0; any error is reported, not raised."""
    problems = check_task(task)
    if problems:
        return CheckResult(task, None, None, "; ".join(problems))
    scores: dict[str, float] = {}
    try:
        noop = await verify_artifact(taskpack, task, await replay(taskpack, task, [], pools), pools)
        calls = taskpack.gold(task)
        gold = None
        if calls is not None:
            gold = await verify_artifact(taskpack, task, await replay(taskpack, task, calls, pools), pools)
        for probe in probes_of(taskpack, task) if probes else []:
            if not only or probe.name in only:
                scores[probe.name], _ = await probe_reward(taskpack, task, probe, pools)
    except (SandboxError, VerifierError) as e:
        return CheckResult(task, None, None, f"{type(e).__name__}: {e}", scores)
    problem = ""
    if gold is not None and gold.reward != 1.0:
        problem = f"gold scored {gold.reward:g}: {failure_reason(gold.details)}"
    elif noop.reward != 0.0:
        problem = f"no-op scored {noop.reward:g}: {failure_reason(noop.details, 300)}"
    elif any(scores.values()):
        problem = "probes scored: " + ", ".join(f"{n} {r:g}" for n, r in scores.items() if r)
    return CheckResult(task, gold.reward if gold else None, noop.reward, problem, scores)


def select_tasks(
    taskpack: Taskpack,
    splits: Sequence[str],
    task_ids: Sequence[str] = (),
    sample: int | None = None,
    seed: int = 0,
    categories: Sequence[str] = (),
    difficulties: Sequence[str] = (),
) -> list[Task]:
    tasks = [task for split in splits for task in taskpack.tasks(split)]
    if categories:
        tasks = [task for task in tasks if task.category in categories]
    if difficulties:
        tasks = [task for task in tasks if task.difficulty in difficulties]
    if task_ids:
        wanted = set(task_ids)
        tasks = [task for task in tasks if task.id in wanted]
        missing = wanted - {task.id for task in tasks}
        if missing:
            raise PtrainError(f"no such task in {taskpack.name}: {', '.join(sorted(missing))}")
    if sample is not None and sample < len(tasks):
        tasks = random.Random(seed).sample(tasks, sample)
    return tasks


async def check_taskpack(
    taskpack: Taskpack,
    tasks: Sequence[Task],
    pools: PoolSet,
    concurrency: int = 4,
    on_result: Callable[[CheckResult], None] = lambda r: None,
    probes: bool = True,
    only: Sequence[str] = (),
    timeout_s: float | None = None,
) -> list[CheckResult]:
    """Every task checked, `concurrency` at once; a task that takes longer than `timeout_s` fails saying so."""
    duplicates = {task_id for task_id, n in Counter(task.id for task in tasks).items() if n > 1}
    gate = asyncio.Semaphore(concurrency)

    async def one(task: Task) -> CheckResult:
        async with gate:
            try:
                result = await asyncio.wait_for(check_one(taskpack, task, pools, probes, only), timeout_s)
            except TimeoutError:
                result = CheckResult(task, None, None, f"the check took longer than {timeout_s:g} s (--timeout-s)")
            if task.id in duplicates:
                result = CheckResult(task, result.gold, result.noop, f"duplicate task id {task.id}", result.probes)
            on_result(result)
            return result

    return list(await asyncio.gather(*(one(task) for task in tasks)))


@dataclass
class RunVerification:
    """What `verify_run` did: verdicts written, episodes skipped, and the failures (not written)."""

    total: int = 0
    verified: int = 0
    passed: int = 0
    skipped: int = 0  # no artifact (an infrastructure error during rollout), a damaged one, or a task gone
    errors: list[str] = field(default_factory=list)


Row = tuple[str, str, str, str]  # an episode to verify: episode id, taskpack, task id, artifact sha256


def unverified(store: Store, reverify: bool = False, verified_since: float | None = None,
               rows: list[Row] | None = None) -> list[Row]:  # fmt: skip
    """The stored episodes without a verdict (all of them with `reverify`; with `verified_since` too,
    those without one given since then). `rows` narrows it to these: a Ray worker's share, checked
    again because a dead worker may have verified some of it (ptrain/scale/workers.py)."""
    verdicts = store.latest_verdicts()
    if not reverify:
        done = set(verdicts)
    else:
        since = verified_since if verified_since is not None else float("inf")
        done = {e for e, v in verdicts.items() if v.verified_at >= since}
    if rows is None:
        table = store.summary().select(["episode_id", "taskpack", "task_id", "artifact_sha256"])
        rows = [tuple(row.values()) for row in table.to_pylist()]
    return [row for row in rows if row[0] not in done]


@dataclass
class TaskIndex:
    """Taskpacks and the tasks of all their splits, each loaded once (a Ray worker keeps one across calls)."""

    packs: dict[str, Taskpack] = field(default_factory=dict)
    tasks: dict[tuple[str, str], Task] = field(default_factory=dict)

    def add(self, pack_name: str) -> None:
        if pack_name not in self.packs:
            self.packs[pack_name] = load_taskpack(pack_name)
            for split in SPLITS:
                self.tasks.update({(pack_name, t.id): t for t in self.packs[pack_name].tasks(split)})


async def verify_run(
    store: Store,
    pools: PoolSet,
    reverify: bool = False,
    concurrency: int = 8,
    on_progress: Callable[[int], None] = lambda n: None,
    rows: list[Row] | None = None,
    index: TaskIndex | None = None,
) -> RunVerification:
    """Verify every stored episode that has no verdict yet (all of them with `reverify`), or `rows`.

    Verdicts are appended to the store as they come. A verifier or sandbox failure writes nothing,
    so the episode is simply picked up again by the next run; a damaged artifact is skipped and named
    in `errors`, and the rest of the run is verified all the same.
    """
    todo = unverified(store, reverify) if rows is None else rows
    report = RunVerification(total=len(todo))
    index = index or TaskIndex()
    for _, pack_name, _, _ in todo:
        index.add(pack_name)
    packs, tasks = index.packs, index.tasks
    gate = asyncio.Semaphore(concurrency)
    writer = store.writer(flush_every=64, flush_interval_s=5.0)

    async def one(episode_id: str, pack_name: str, task_id: str, sha: str) -> None:
        try:
            await verify_episode(episode_id, pack_name, task_id, sha)
        finally:
            on_progress(1)

    async def verify_episode(episode_id: str, pack_name: str, task_id: str, sha: str) -> None:
        task = tasks.get((pack_name, task_id))
        if not sha or task is None:
            report.skipped += 1
            if task is None:
                report.errors.append(f"{episode_id}: task {task_id} is not in {pack_name} any more")
            return
        try:
            artifact = store.artifact(sha)
        except StoreError as e:  # skipped and named: the rest of the run is verified all the same
            report.skipped += 1
            report.errors.append(f"{episode_id} ({task_id}): skipped, {e}")
            return
        async with gate:
            try:
                verdict = await verify_artifact(packs[pack_name], task, artifact, pools)
            except (SandboxError, VerifierError) as e:
                report.errors.append(f"{episode_id} ({task_id}): {type(e).__name__}: {e}")
                return
        writer.add_verdict(StoredVerdict(episode_id=episode_id, reward=verdict.reward, passed=verdict.passed,
                                         details=dict(verdict.details), verifier_version=verdict.verifier_version))  # fmt: skip
        report.verified += 1
        report.passed += verdict.passed

    try:
        await asyncio.gather(*(one(*row) for row in todo))
    finally:
        writer.close()
    return report
