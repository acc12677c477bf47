"""Rollout and verification workers on Ray: one store on a shared path, work handed out by group.

    ptrain rollout RUN ... --ray ADDRESS --workers N       (ptrain eval and ptrain verify the same)

Each worker is a Ray actor with its own engine (the in-process `hf` engine on its share of a device,
or the `openai` engine pointed at a server) and its own sandbox pool (podman on its node). The
driver plans the work as a one-machine run would and hands it out one GRPO group at a time (verify:
a few episodes at a time), keeping each worker `concurrency` episodes busy. Every worker writes its
own shards into the run directory, which must be on a path all nodes share.

Nothing lost, nothing duplicated: a worker finishes a group by flushing its episodes and verdicts.
When a worker dies, the driver re-queues the groups it had; the worker that takes one over plans it
against the store, as a resumed run does, so it produces only the samples the dead worker had not
flushed and verifies the ones it had flushed without a verdict. A dead worker is killed for good
(no restarts), so it cannot write beside its replacement.

Ray is optional (`pip install ptrain[ray]`); nothing outside this package imports it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import os
import socket
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ptrain.errors import ConfigError, PtrainError
from ptrain.rollout.config import RolloutConfig
from ptrain.rollout.metrics import Meter
from ptrain.rollout.progress import RolloutReport
from ptrain.rollout.scheduler import Rollout
from ptrain.verify import TaskIndex, unverified, verify_run

log = logging.getLogger(__name__)
ENV_PASSED = ("XDG_CACHE_HOME", "HF_HOME", "OMP_NUM_THREADS", "CONTAINERS_CONF")  # and every PTRAIN_*


class ScaleError(PtrainError):
    """The cluster cannot do the work: Ray is missing, unreachable, or every worker died."""


def import_ray():
    try:
        import ray
    except ImportError as e:
        raise ConfigError("--ray needs Ray", fix="pip install 'ptrain[ray]'") from e
    return ray


def connect(address: str) -> Any:
    """Join the cluster at `address` ("auto": the one this node belongs to; "local": start one here)."""
    ray = import_ray()
    if not ray.is_initialized():
        env = {k: v for k, v in os.environ.items() if k.startswith("PTRAIN_") or k in ENV_PASSED}
        try:
            ray.init(address=None if address == "local" else address, runtime_env={"env_vars": env},
                     logging_level=logging.WARNING, log_to_driver=False, configure_logging=False)  # fmt: skip
        except ConnectionError as e:
            raise ScaleError(f"cannot reach the Ray cluster at {address}: {e}",
                             fix="start one with `ray start --head`, or pass --ray local") from e  # fmt: skip
    return ray


# -- the worker (a Ray actor) ------------------------------------------------------------------


class RolloutWorker:
    """One worker: an engine, a sandbox pool and a store writer; runs the groups the driver hands it.

    Async Ray actor: several groups run at once on its one engine, so the engine batches across them."""

    def __init__(self, run: str, cfg: RolloutConfig, index: int, with_engine: bool = True):
        self.run, self.cfg, self.index, self.with_engine = Path(run), cfg, index, with_engine
        self.meter = Meter()  # shared by every group this worker runs: its demand is the worker's
        self.stack = contextlib.AsyncExitStack()
        self.parts: tuple | None = None
        self.base_weights: dict = {}  # the weights adapter deliveries replace (see weights.py)
        self.tasks = TaskIndex()  # taskpacks loaded for verification, kept across calls
        self.busy_at_open = 0.0
        self.lock = asyncio.Lock()

    async def open(self) -> dict[str, Any]:
        """Load the engine and start the pool (once); say where this worker runs."""
        async with self.lock:
            if self.parts is None:
                self.parts = await self._open()
        engine = self.parts[2]
        return {"index": self.index, "node": socket.gethostname(), "pid": os.getpid(),
                "engine": engine.name if engine else None,
                "policy_version": engine.policy_version if engine else None}  # fmt: skip

    async def _open(self) -> tuple:
        from ptrain.rollout.parts import build_engine, sandbox_pools
        from ptrain.sandbox import runtime
        from ptrain.store import Store
        from ptrain.taskpack import load as load_taskpack

        store, pack, engine, fmt = Store(self.run, create=True), None, None, None
        await asyncio.to_thread(runtime.ensure_service)
        if self.with_engine:  # verification needs sandboxes only
            pack = load_taskpack(self.cfg.taskpack)
            engine, fmt = await asyncio.to_thread(build_engine, pack, self.cfg)
            self.stack.push_async_callback(engine.close)
            self.busy_at_open = engine.stats().busy_s
        pools = await self.stack.enter_async_context(sandbox_pools(self.cfg))
        return store, pack, engine, fmt, pools

    async def rollout(self, task_id: str) -> dict[str, Any]:
        """Every missing sample of one task's group at the engine's policy version, verified; then flushed."""
        await self.open()
        store, pack, engine, fmt, pools = self.parts
        cfg = dataclasses.replace(self.cfg, task_ids=(task_id,), tasks=None, concurrency=self.cfg.samples)
        scheduler = Rollout(cfg, store, pack, engine, fmt, pools)
        scheduler.meter = self.meter
        report = await scheduler.run()
        return {**report_fields(report), "errors": report.errors}

    async def verify(self, rows: list[tuple], reverified_since: float | None) -> dict[str, Any]:
        """Verify these episodes (ptrain/verify.py's rows) unless they got a verdict already (since
        `reverified_since` with --reverify): a share re-queued from a dead worker may be partly done."""
        await self.open()
        store, pools = self.parts[0], self.parts[4]
        rows = unverified(store, reverified_since is not None, reverified_since, rows=rows)
        with self.meter.phase("verify"):
            report = await verify_run(store, pools, concurrency=self.cfg.verify_concurrency, rows=rows,
                                      index=self.tasks)  # fmt: skip
        return dataclasses.asdict(report)

    async def load_policy(self, payload: dict[str, Any], version: int, adapter_dir: str = "") -> int:
        """Apply the trainer's weights between two decode steps; later episodes report `version`.

        The `hf` engine applies the payload (LoRA merged in float32 and unmerged below it, or all weights);
        the `openai` engine has its server load the saved adapter at `adapter_dir` (vLLM's load_lora_adapter)."""
        from ptrain.engine.weights import apply_payload

        await self.open()
        engine = self.parts[2]
        if self.cfg.engine == "hf" and not hasattr(engine, "update_weights"):
            raise ConfigError("the hf engine takes the trainer's weights only in process, not in a process of its own",
                              fix="set engine_process = false in the rollout config")  # fmt: skip
        if engine is not None and hasattr(engine, "load_lora"):
            if not adapter_dir:
                raise ConfigError("the openai engine loads adapters from a directory; none was given")
            await engine.load_lora(f"ptrain-v{version}", adapter_dir, version)
            return engine.policy_version
        if engine is None or not hasattr(engine, "update_weights"):
            raise ConfigError(f"the {self.cfg.engine} engine cannot take weights from the trainer",
                              fix="online training on Ray needs --engine hf or openai")  # fmt: skip
        await asyncio.to_thread(engine.update_weights, lambda m: apply_payload(m, payload, self.base_weights), version)
        return engine.policy_version

    def progress(self) -> dict[str, float]:
        """Episodes in each phase now, and the engine's counters since this worker opened."""
        snapshot = self.meter.snapshot()
        if self.parts is not None and self.parts[2] is not None:
            stats = self.parts[2].stats()
            snapshot.update(engine_busy_s=stats.busy_s - self.busy_at_open, generated_tokens=stats.generated_tokens,
                            policy_version=self.parts[2].policy_version)  # fmt: skip
        return snapshot

    async def close(self) -> None:
        await self.stack.aclose()
        self.parts = None


def report_fields(report: RolloutReport) -> dict[str, Any]:
    """A group's report as plain values (its engine and demand figures are the worker's; see progress)."""
    fields = {f.name: getattr(report, f.name) for f in dataclasses.fields(report) if f.name != "errors"}
    return {**fields, "statuses": dict(report.statuses), "finishes": dict(report.finishes)}


# -- the driver's side -------------------------------------------------------------------------


@dataclasses.dataclass
class Member:
    actor: Any
    index: int
    info: dict = dataclasses.field(default_factory=dict)
    outstanding: dict = dataclasses.field(default_factory=dict)  # ObjectRef -> the item it works on
    alive: bool = True
    last: dict = dataclasses.field(default_factory=dict)  # its latest progress snapshot


class Fleet:
    """The workers of one run; `map` spreads items over them and re-queues a dead worker's items."""

    def __init__(self, run: Path, cfg: RolloutConfig, workers: int = 0, with_engine: bool = True):
        self.ray = connect(cfg.ray)
        count = workers or cfg.workers or len([n for n in self.ray.nodes() if n.get("Alive")])
        remote = self.ray.remote(RolloutWorker).options(
            num_cpus=cfg.worker_cpus, num_gpus=cfg.worker_gpus, scheduling_strategy="SPREAD",
            max_restarts=0, max_concurrency=1000)  # fmt: skip
        run = str(Path(run).resolve())
        self.members = [Member(remote.remote(run, cfg, i, with_engine), i) for i in range(count)]
        self.slots = max(1, math.ceil(cfg.concurrency / cfg.samples))  # groups in flight per worker
        self.deaths: list[str] = []
        self.mapping = asyncio.Lock()  # one `map` at a time: each collects the results of every outstanding call

    async def start(self) -> list[dict]:
        """Wait until every worker has its engine and pool (a worker that cannot start is an error)."""
        infos = await self._gather([m.actor.open.remote() for m in self.members])
        for member, info in zip(self.members, infos, strict=True):
            member.info = info
        return infos

    async def _gather(self, refs: list) -> list:
        return await asyncio.to_thread(self.ray.get, refs)

    @property
    def alive(self) -> list[Member]:
        return [m for m in self.members if m.alive]

    async def map(self, method: str, items: Iterable[Any], args: tuple = (), on_result: Callable = lambda r: None,
                  per_worker: int | None = None) -> list[Any]:  # fmt: skip
        """Run `actor.method(item, *args)` for every item across the live workers; results in finishing order.

        A worker that dies (its process killed, its node lost) is marked dead and killed for good; the
        items it held go back to the front of the queue for the others. Concurrent calls wait their turn."""
        async with self.mapping:
            return await self._map(method, items, args, on_result, per_worker)

    async def _map(self, method: str, items: Iterable[Any], args: tuple, on_result: Callable,
                   per_worker: int | None) -> list[Any]:  # fmt: skip
        queue, results = deque(items), []
        per_worker = per_worker or self.slots
        while queue or any(m.outstanding for m in self.members):
            for member in self.alive:
                while queue and len(member.outstanding) < per_worker:
                    item = queue.popleft()
                    member.outstanding[getattr(member.actor, method).remote(item, *args)] = item
            if not self.alive:
                raise ScaleError(f"every worker died ({'; '.join(self.deaths)}); {len(queue)} items not done",
                                 fix="run the same command again: finished work is in the store")  # fmt: skip
            refs = [ref for m in self.members for ref in m.outstanding]
            ready, _ = await asyncio.to_thread(self.ray.wait, refs, num_returns=1, timeout=1.0)
            for ref in ready:
                member = next(m for m in self.members if ref in m.outstanding)
                item = member.outstanding.pop(ref)
                try:
                    result = await asyncio.to_thread(self.ray.get, ref)
                except self.ray.exceptions.RayActorError as e:
                    self._bury(member, e)
                    queue.extendleft(reversed([item, *member.outstanding.values()]))
                    member.outstanding.clear()
                    continue
                results.append(result)
                on_result(result)
        return results

    def _bury(self, member: Member, error: BaseException) -> None:
        member.alive = False
        cause = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        self.deaths.append(f"worker {member.index}: {cause}")
        log.warning("worker %d died (%s); its work goes to the others", member.index, cause)
        with contextlib.suppress(Exception):
            self.ray.kill(member.actor, no_restart=True)

    async def deliver(self, payload: dict[str, Any], version: int, adapter_dir: str = "") -> list[int]:
        """Put new policy weights into every live worker's engine; returns the versions they report.

        `adapter_dir`, the same adapter saved on the shared path, is for workers whose engine is a server."""
        ref = self.ray.put(payload)
        versions = []
        for member in self.alive:
            try:
                call = member.actor.load_policy.remote(ref, version, adapter_dir)
                versions.append(await asyncio.to_thread(self.ray.get, call))
            except self.ray.exceptions.RayActorError as e:
                self._bury(member, e)
        return versions

    async def poll(self) -> list[dict]:
        """Every live worker's latest progress (a worker slow to answer keeps its previous snapshot)."""
        members = self.alive
        refs = [m.actor.progress.remote() for m in members]
        ready, _ = await asyncio.to_thread(self.ray.wait, refs, num_returns=len(refs), timeout=2.0)
        for member, ref in zip(members, refs, strict=True):
            if ref in ready:
                with contextlib.suppress(Exception):
                    member.last = await asyncio.to_thread(self.ray.get, ref)
        return [m.last for m in self.members]

    async def close(self) -> None:
        refs = [m.actor.close.remote() for m in self.alive]
        with contextlib.suppress(Exception):
            await asyncio.to_thread(self.ray.wait, refs, num_returns=len(refs), timeout=60.0)
        for member in self.members:
            with contextlib.suppress(Exception):
                self.ray.kill(member.actor, no_restart=True)


def merge(report: RolloutReport, fields: dict[str, Any]) -> None:
    """Add one group's report to the run's."""
    for name in ("infra_retries", "verified", "passed", "reward_sum", "verify_errors",
                 "model_tokens", "tool_s"):  # fmt: skip
        setattr(report, name, getattr(report, name) + fields[name])
    report.statuses.update(Counter(fields["statuses"]))
    report.finishes.update(Counter(fields["finishes"]))
    report.errors.extend(fields.get("errors", []))


def fleet_snapshot(report: RolloutReport, workers: list[dict], started: float) -> dict[str, Any]:
    """The combined progress of the run: finished groups' totals plus every worker's live counters."""
    report.wall_s = time.monotonic() - started
    report.engine_busy_s = sum(w.get("engine_busy_s", 0.0) for w in workers)
    report.demand_s = sum(w.get("demand_s", 0.0) for w in workers)
    live = {key: sum(w.get(key, 0.0) for w in workers)
            for key in ("in_setup", "in_generate", "in_tools", "in_verify", "tools_episode_s", "generated_tokens")}  # fmt: skip
    return {**report.as_dict(), **live, "workers": len([w for w in workers if w])}


async def ray_rollout(run: Path, cfg: RolloutConfig, on_snapshot: Callable[[dict], None]) -> RolloutReport:
    """`ptrain rollout` (and `ptrain eval`) over Ray workers: whole groups out, one report back."""
    from ptrain.store import Store
    from ptrain.taskpack import load as load_taskpack
    from ptrain.verify import select_tasks

    store, pack = Store(run, create=True), load_taskpack(cfg.taskpack)
    tasks = select_tasks(pack, [cfg.split], cfg.task_ids, cfg.tasks if not cfg.task_ids else None, cfg.seed,
                         cfg.categories, cfg.difficulties)  # fmt: skip
    done = store.done(taskpack=pack.name, min_policy_version=0, max_policy_version=0)
    todo = [t.id for t in tasks if any((t.id, i) not in done for i in range(cfg.samples))]
    report = RolloutReport()
    report.planned = sum((t, i) not in done for t in todo for i in range(cfg.samples))
    report.skipped = cfg.samples * len(tasks) - report.planned
    fleet = Fleet(run, cfg)
    try:
        await fleet.start()
        started = time.monotonic()  # the clock starts with the workers loaded, as a local run's does
        watcher = asyncio.create_task(_watch(fleet, report, started, on_snapshot))
        try:
            await fleet.map("rollout", todo, on_result=lambda fields: merge(report, fields))
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
        snapshot = fleet_snapshot(report, await fleet.poll(), started)
        on_snapshot(snapshot)
    finally:
        await fleet.close()
    report.errors.extend(f"lost {death}" for death in fleet.deaths)
    return report


async def _watch(fleet: Fleet, report: RolloutReport, started: float, on_snapshot: Callable[[dict], None]) -> None:
    while True:
        await asyncio.sleep(1.0)
        on_snapshot(fleet_snapshot(report, await fleet.poll(), started))


async def ray_verify(run: Path, cfg: RolloutConfig, reverify: bool, on_progress: Callable[[int], None]) -> dict:
    """`ptrain verify` over Ray workers: the episodes without a verdict, a few per call."""
    from ptrain.store import Store

    since = time.time() if reverify else None
    todo = unverified(Store(run), reverify)
    chunk = max(1, cfg.verify_concurrency * 2)
    batches = [todo[i : i + chunk] for i in range(0, len(todo), chunk)]
    totals: Counter = Counter()
    errors: list[str] = []

    def add(result: dict) -> None:
        totals.update({k: result[k] for k in ("total", "verified", "passed", "skipped")})
        errors.extend(result["errors"])
        on_progress(result["total"])

    fleet = Fleet(run, cfg, with_engine=False)
    try:
        await fleet.start()
        await fleet.map("verify", batches, args=(since,), on_result=add, per_worker=2)
    finally:
        await fleet.close()
    return {**totals, "total": len(todo), "errors": errors + [f"lost {d}" for d in fleet.deaths]}
