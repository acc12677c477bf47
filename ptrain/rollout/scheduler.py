"""The rollout scheduler: many episodes in flight, so the engine always has work while tools run.

    async with PoolSet(...) as pools:
        report = await Rollout(config, store, taskpack, engine, fmt, pools).run()

Each task gets `samples` episodes with one group id (a GRPO group). `concurrency` workers each run
one episode at a time in its own sandbox; while one waits on a compiler or a test run, the others'
requests keep the engine busy, and the engine batches whatever is pending. Episodes go to the store
as they finish, with their artifact; each is then verified in a fresh sandbox, overlapping with
other episodes' generation, and its verdict written (`verify=False` leaves that to `ptrain verify`).

Resuming: the (task, sample) pairs already in the store are skipped, and stored episodes without a
verdict are verified first, so a killed run re-run finishes the rest exactly once. A pair that
holds only infrastructure errors is run again by each resumed run, `retries` times at most.

Failures are attributed. Infrastructure (a sandbox or engine failure, a taskpack whose setup
raises: transient, so retried `retries` times) is stored as an episode with status "error" and the
error's type, never trained on and counted apart in evaluation. The model's own failures are
scored: a workspace it left too large or broken to collect (`ToolError`, e.g. `WorkspaceError`)
is stored with a 0 verdict saying why, trainable like any failed attempt. A verifier failure
writes no verdict (it is counted, and `ptrain verify` picks the episode up later).

`mode="lockstep"` is the synchronous baseline benchmarks compare against: episodes run in waves of
`concurrency`, and within a wave every episode generates, then every episode runs its tools, turn
by turn, so the engine idles while the slowest tool runs.

Beside it: work.py (what it plans: `Work`, group ids, seeds), progress.py (`RolloutReport`, what it
did) and lockstep.py (the wave's `Barrier`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from ptrain.engine.base import Engine, Sampling
from ptrain.episode import Episode, StoredVerdict, StoreError
from ptrain.errors import EngineError, SandboxError, ToolError, VerifierError
from ptrain.rollout.chat import ChatFormat
from ptrain.rollout.config import RolloutConfig
from ptrain.rollout.lockstep import Barrier
from ptrain.rollout.loop import EpisodeLimits, EpisodeTrace, Pacing, run_episode
from ptrain.rollout.metrics import Meter
from ptrain.rollout.progress import RolloutReport
from ptrain.rollout.work import Work, episode_seed, group_id_of
from ptrain.sandbox.pool import PoolSet
from ptrain.store import Store
from ptrain.taskpack import Task, Taskpack
from ptrain.verify import image_of, select_tasks, verify_artifact

log = logging.getLogger(__name__)
INFRA_ERRORS = (SandboxError, EngineError)


class SetupFailed(Exception):
    """The taskpack's setup raised: retried like infrastructure, stored as TaskpackError at the end."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


class Rollout:
    def __init__(
        self,
        config: RolloutConfig,
        store: Store,
        taskpack: Taskpack,
        engine: Engine,
        fmt: ChatFormat,
        pools: PoolSet,
        on_update: Callable[[Rollout], None] = lambda r: None,
    ):
        self.config, self.store, self.taskpack, self.engine, self.fmt, self.pools = (
            config, store, taskpack, engine, fmt, pools)  # fmt: skip
        self.on_update = on_update
        self.meter = Meter()
        self.report = RolloutReport()
        self.limits = EpisodeLimits(
            max_turns=config.max_turns,
            max_new_tokens=config.max_new_tokens,
            max_episode_tokens=config.max_episode_tokens,
            max_wall_s=config.max_wall_s,
            context_window=config.context_window,
            state_note=config.state_note,
        )
        self.verify_gate = asyncio.Semaphore(config.verify_concurrency)
        self.verifications: set[asyncio.Task] = set()
        self.writer = store.writer(flush_every=config.flush_every, flush_interval_s=config.flush_interval_s)
        self.tasks_by_id: dict[str, Task] = {}

    def plan(self) -> list[Work]:
        """Every (task, sample) this run should produce and the store does not hold yet, group by group."""
        c = self.config
        tasks = select_tasks(self.taskpack, [c.split], c.task_ids, c.tasks if not c.task_ids else None, c.seed,
                             c.categories, c.difficulties)  # fmt: skip
        self.tasks_by_id = {task.id: task for task in tasks}
        version = self.engine.policy_version  # a task is done for this policy version: online training repeats tasks
        stored = self.store.summary(taskpack=self.taskpack.name, min_policy_version=version, max_policy_version=version)
        done, errors = set(), Counter()
        for task_id, sample, status in zip(*(stored[n].to_pylist() for n in ("task_id", "sample_index", "status")),
                                           strict=True):  # fmt: skip
            if status == "error":
                errors[(task_id, sample)] += 1
            else:
                done.add((task_id, sample))
        done |= {key for key, n in errors.items() if n > c.retries}  # resumed `retries` times already: left as it is
        work = [
            Work(task, i, group_id_of(self.taskpack.name, task.id, version), errors[(task.id, i)])
            for task in tasks
            for i in range(c.samples)
        ]
        todo = [w for w in work if (w.task.id, w.sample_index) not in done]
        self.report.infra_retried_from_store = sum(1 for w in todo if w.prior_errors)
        self.report.planned, self.report.skipped = len(todo), len(work) - len(todo)
        return todo

    async def run(self) -> RolloutReport:
        started = self.report.started = time.monotonic()
        busy_before = self.engine.stats().busy_s
        todo = self.plan()
        if self.config.verify:
            self._verify_backlog()
        try:
            if self.config.mode == "lockstep":
                for start in range(0, len(todo), self.config.concurrency):
                    wave, barrier = todo[start : start + self.config.concurrency], Barrier()
                    await asyncio.gather(*(self._episode(w, barrier) for w in wave))
            else:
                queue: asyncio.Queue[Work] = asyncio.Queue()
                for w in todo:
                    queue.put_nowait(w)
                await asyncio.gather(*(self._worker(queue) for _ in range(self.config.concurrency)))
            while self.verifications:
                await asyncio.gather(*list(self.verifications), return_exceptions=True)
        finally:
            for pending in self.verifications:
                pending.cancel()
            self.writer.close()
            self.report.wall_s = time.monotonic() - started
            self.report.engine_busy_s = self.engine.stats().busy_s - busy_before
            self.report.demand_s = self.meter.snapshot()["demand_s"]
            self.on_update(self)
        return self.report

    async def _worker(self, queue: asyncio.Queue[Work]) -> None:
        while not queue.empty():
            await self._episode(queue.get_nowait(), None)

    async def _episode(self, work: Work, barrier: Barrier | None) -> None:
        """One episode, retried on infrastructure failures, stored; its verification started."""
        attempts = 0
        while True:
            attempts += 1
            if barrier:
                barrier.join()
            try:
                episode, artifact = await self._attempt(work, barrier, attempts)
                break
            except (*INFRA_ERRORS, SetupFailed) as e:
                if attempts > self.config.retries:
                    if isinstance(e, SetupFailed):
                        episode = self._failed(work, e.error, attempts, "TaskpackError")
                    else:
                        episode = self._failed(work, e, attempts)
                    artifact = None
                    break
                self.report.infra_retries += 1
                log.warning("retrying %s sample %d after %s: %s", work.task.id, work.sample_index, type(e).__name__, e)
            finally:
                if barrier:
                    barrier.leave()
        self.writer.add(episode)
        self.report.statuses[episode.status] += 1
        self.report.finishes[episode.metadata.get("finish") or episode.error_type] += 1
        self.report.model_tokens += episode.model_tokens
        self.report.tool_s += episode.timings.get("tool_s", 0.0)
        if episode.status == "error":
            self.report.errors.append(
                f"{work.task.id}#{work.sample_index}: {episode.error_type}: {episode.error_message}"
            )
        self.on_update(self)
        if artifact is not None and self.config.verify:
            self._start_verification(episode.episode_id, work.task, lambda: artifact)

    async def _attempt(self, work: Work, barrier: Barrier | None, attempts: int) -> tuple[Episode, bytes | None]:
        task, c = work.task, self.config
        spec = image_of(self.taskpack, task)
        started = time.monotonic()
        with self.meter.phase("setup"):
            pool = await self.pools.pool(spec)
        async with self.pools.sandbox(spec) as sandbox:
            try:
                with self.meter.phase("setup"):
                    await self.taskpack.setup(task, sandbox)
            except INFRA_ERRORS:
                raise
            except Exception as e:  # before the model acted: not its failure; often transient
                raise SetupFailed(e) from e
            setup_s = time.monotonic() - started
            pacing = Pacing(barrier.wait, barrier.wait) if barrier else Pacing()
            sampling = Sampling(
                temperature=c.temperature,
                top_p=c.top_p,
                seed=episode_seed(c.seed, task.id, work.sample_index, attempts),
                task_id=task.id,
            )
            trace = await run_episode(
                task,
                self.taskpack,
                sandbox,
                self.engine,
                self.fmt,
                self.limits,
                sampling,
                pacing=pacing,
                meter=self.meter,
            )
            t0 = time.monotonic()
            uncollected = ""
            try:
                artifact = await self.taskpack.artifact(task, sandbox)
            except INFRA_ERRORS:
                raise
            except ToolError as e:  # the model left a workspace that can't be collected: its failure
                artifact, uncollected = b"", f"{type(e).__name__}: {e}"
            except Exception as e:
                return self._failed(work, e, attempts, "TaskpackError"), None
        timings = {**trace.timings, "setup_s": setup_s, "artifact_s": time.monotonic() - t0,
                   "wall_s": time.monotonic() - started}  # fmt: skip
        sha = self.store.put_artifact(artifact) if trace.status != "error" and not uncollected else ""
        episode = self._episode_row(work, trace, timings, pool.image, sha, attempts, uncollected)
        if uncollected and trace.status != "error":
            self._model_failure(episode.episode_id, uncollected)
        return episode, artifact if sha else None

    def _model_failure(self, episode_id: str, why: str) -> None:
        """A 0 verdict for an episode whose artifact the model made uncollectable."""
        self.writer.add_verdict(StoredVerdict(episode_id=episode_id, reward=0.0, passed=False,
                                              details={"error": why, "model_failure": True},
                                              verifier_version="ptrain/uncollected"))  # fmt: skip
        self.report.verified += 1

    def _episode_row(
        self, work: Work, trace: EpisodeTrace, timings: dict, image: str, sha: str, attempts: int, uncollected: str = ""
    ) -> Episode:
        task = work.task
        return Episode(
            **self._identity(work),
            token_ids=trace.token_ids,
            loss_mask=trace.loss_mask,
            logprobs=trace.logprobs,
            transcript=trace.transcript,
            tool_calls=trace.tool_calls,
            status=trace.status,
            error_type=trace.error_type,
            error_message=trace.error_message,
            policy_version=min(trace.policy_versions, default=self.engine.policy_version),
            timings=timings,
            image_digest=image,
            artifact_sha256=sha,
            metadata={
                "finish": trace.finish,
                "turns": trace.turns,
                "segments": trace.segments,
                "policy_versions": trace.policy_versions,
                "format_errors": trace.format_errors,
                "category": task.category,
                "difficulty": task.difficulty,
                "attempts": attempts,
                "mode": self.config.mode,
                "action_format": self.config.action_format,
                "tool_listing": self.config.tool_listing,
                "temperature": self.config.temperature,
                "top_p": self.config.top_p,
                "engine": self.engine.name,
                "evaluation": self.config.evaluation,
                "text_mode": trace.text_mode,
                "trainable": not (self.config.evaluation or trace.text_mode),
                **({"uncollected": uncollected} if uncollected else {}),
            },
        )

    def _identity(self, work: Work) -> dict[str, Any]:
        return {
            "run": self.store.path.name,
            "taskpack": self.taskpack.name,
            "taskpack_version": self.taskpack.version,
            "task_id": work.task.id,
            "split": work.task.split,
            "group_id": work.group_id,
            "sample_index": work.sample_index,
            "group_size": self.config.samples,
            "model": self.engine.model,
        }

    def _failed(self, work: Work, error: BaseException, attempts: int, error_type: str = "") -> Episode:
        """An infrastructure failure as a stored episode: status error, never trained on."""
        message = f"{type(error).__name__}: {error}" if error_type else str(error)
        return Episode(
            **self._identity(work),
            status="error",
            error_type=error_type or type(error).__name__,
            error_message=message[:2000],
            policy_version=self.engine.policy_version,
            metadata={
                "attempts": attempts,
                "mode": self.config.mode,
                "category": work.task.category,
                "difficulty": work.task.difficulty,
                "trainable": False,
            },  # fmt: skip
        )

    # --- verification, overlapping with generation -------------------------------------------

    def _start_verification(self, episode_id: str, task: Task, artifact: Callable[[], bytes]) -> None:
        """Verify in the background; `artifact` is read only once a verification slot is free."""
        job = asyncio.create_task(self._verify(episode_id, task, artifact))
        self.verifications.add(job)
        job.add_done_callback(self.verifications.discard)

    def _verify_backlog(self) -> None:
        """Stored episodes of this taskpack with an artifact but no verdict (a killed run's last ones)."""
        verdicts = self.store.latest_verdicts()
        rows = self.store.summary(taskpack=self.taskpack.name).select(["episode_id", "task_id", "artifact_sha256"])
        for episode_id, task_id, sha in zip(*(rows[n].to_pylist() for n in rows.column_names), strict=True):
            task = self.tasks_by_id.get(task_id)
            if sha and task and episode_id not in verdicts:
                self._start_verification(episode_id, task, lambda sha=sha: self.store.artifact(sha))

    async def _verify(self, episode_id: str, task: Task, artifact: Callable[[], bytes]) -> None:
        async with self.verify_gate:
            try:
                with self.meter.phase("verify"):
                    verdict = await verify_artifact(self.taskpack, task, artifact(), self.pools)
            except (SandboxError, VerifierError, StoreError) as e:  # StoreError: a damaged artifact
                self.report.verify_errors += 1
                self.report.errors.append(f"verify {task.id} ({episode_id[:8]}): {type(e).__name__}: {e}")
                return
        self.writer.add_verdict(StoredVerdict(episode_id=episode_id, reward=verdict.reward, passed=verdict.passed,
                                              details=dict(verdict.details), verifier_version=verdict.verifier_version))  # fmt: skip
        self.report.verified += 1
        self.report.passed += verdict.passed
        self.report.reward_sum += verdict.reward
        self.on_update(self)
