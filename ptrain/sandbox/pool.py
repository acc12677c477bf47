"""A warm pool: sandboxes pre-started per image, so an episode gets a fresh one in milliseconds.

`acquire` hands out an idle, already-started sandbox (its agent answered a ping) and starts a
replacement in the background; `release` destroys the used one, so every episode starts from a
clean container. `max_active` bounds how many are out at once. A pool can spread its containers
over several podman services (`unix://` or `ssh://` URLs): each new sandbox goes to the service
with the fewest. `close` removes every container the pool made, idle or not. A `PoolSet` keeps one
pool per image for episodes that need several.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import uuid
from collections import Counter
from collections.abc import AsyncIterator

from ptrain.errors import SandboxError
from ptrain.sandbox.container import Sandbox, SandboxLimits, in_thread
from ptrain.sandbox.images import ImageSpec, build_taskpack
from ptrain.sandbox.runtime import default_url, remove_leftovers

log = logging.getLogger(__name__)


class SandboxPool:
    def __init__(
        self,
        image: str,
        size: int = 4,
        urls: list[str] | None = None,
        limits: SandboxLimits = SandboxLimits(),
        max_active: int | None = None,
        transport: str = "auto",
        workdir: str = "/workspace",
    ):
        self.image = image
        self.workdir = workdir
        self.size = size
        self.urls = urls or [default_url()]
        self.limits = limits
        self.transport = transport
        self.id = uuid.uuid4().hex[:8]
        self.idle: asyncio.Queue[Sandbox] = asyncio.Queue()
        self.active: set[Sandbox] = set()
        self.slots = asyncio.Semaphore(max_active) if max_active else None
        self.tasks: set[asyncio.Task] = set()
        self.starting: Counter[str] = Counter()  # url -> sandboxes being created there
        self.placed: Counter[str] = Counter()  # url -> live sandboxes there
        self.failures: list[str] = []
        self.closed = False

    async def __aenter__(self) -> SandboxPool:
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def start(self) -> None:
        """Fill the pool and wait until it is warm; the first failure is raised."""
        await asyncio.gather(*(self._add() for _ in range(self.size)))

    def _pick_url(self) -> str:
        return min(self.urls, key=lambda url: self.placed[url] + self.starting[url])

    async def _add(self) -> None:
        url = self._pick_url()
        self.starting[url] += 1
        try:
            sandbox = await Sandbox.create(
                self.image,
                url,
                self.limits,
                labels={"ptrain.pool": self.id},
                transport=self.transport,
                workdir=self.workdir,
            )
        finally:
            self.starting[url] -= 1
        self.placed[url] += 1
        if self.closed:
            await self._destroy(sandbox)
        else:
            self.idle.put_nowait(sandbox)

    def _refill(self) -> None:
        if self.closed or self.idle.qsize() + sum(self.starting.values()) >= self.size:
            return
        task = asyncio.create_task(self._add())
        self.tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception():
            self.failures.append(str(task.exception()))
            log.warning("warm pool could not start a sandbox: %s", task.exception())

    async def _destroy(self, sandbox: Sandbox) -> None:
        self.placed[sandbox.url] -= 1
        await sandbox.close()

    async def _take(self) -> Sandbox:
        while self.idle.empty():
            if not any(self.starting.values()):
                await self._add()  # nothing on its way: start one here, so a failure reaches the caller
            else:
                with contextlib.suppress(asyncio.TimeoutError):
                    return await asyncio.wait_for(self.idle.get(), 0.5)
        return self.idle.get_nowait()

    async def acquire(self) -> Sandbox:
        """A fresh, started sandbox; waits for a slot when `max_active` are out."""
        if self.closed:
            raise SandboxError("the sandbox pool is closed")
        if self.slots:
            await self.slots.acquire()
        try:
            while True:
                sandbox = await self._take()
                self._refill()
                try:
                    await sandbox.ping()
                    break
                except SandboxError:  # died while idle: throw it away, take the next
                    await self._destroy(sandbox)
        except BaseException:
            if self.slots:
                self.slots.release()
            raise
        self.active.add(sandbox)
        return sandbox

    async def release(self, sandbox: Sandbox) -> None:
        """Give a sandbox back: it is destroyed in the background, never reused."""
        if sandbox not in self.active:
            return
        self.active.discard(sandbox)
        if self.slots:
            self.slots.release()
        task = asyncio.create_task(self._destroy(sandbox))
        self.tasks.add(task)
        task.add_done_callback(self._task_done)
        self._refill()

    @contextlib.asynccontextmanager
    async def sandbox(self) -> AsyncIterator[Sandbox]:
        sandbox = await self.acquire()
        try:
            yield sandbox
        finally:
            await self.release(sandbox)

    async def close(self) -> None:
        """Remove every container of this pool, idle, active or still starting."""
        self.closed = True
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)
        doomed = list(self.active)
        self.active.clear()
        while not self.idle.empty():
            doomed.append(self.idle.get_nowait())
        await asyncio.gather(*(self._destroy(s) for s in doomed), return_exceptions=True)


def limits_for(spec: ImageSpec, limits: SandboxLimits) -> SandboxLimits:
    """`limits` with what the image spec asks for (memory, CPUs, workspace size, a root agent) in place of the defaults."""
    wanted = {"memory_mb": spec.memory_mb, "cpus": spec.cpus, "workspace_mb": spec.workspace_mb}
    limits = dataclasses.replace(limits, **{k: v for k, v in wanted.items() if v is not None})
    return dataclasses.replace(limits, root=True) if spec.root else limits


class PoolSet:
    """Warm pools keyed by image, made on first use (building the image if it is missing).

    Episodes of one taskpack can need several images (imported tasks bring their own); `max_active`
    bounds the sandboxes out across all of them. An image spec that asks for its own memory, CPUs or
    workspace size (an imported task.toml's) gets sandboxes with those limits.
    """

    def __init__(
        self,
        size: int = 2,
        max_active: int | None = None,
        urls: list[str] | None = None,
        limits: SandboxLimits = SandboxLimits(),
    ):
        self.size = size
        self.urls = urls or [default_url()]
        self.limits = limits
        self.slots = asyncio.Semaphore(max_active) if max_active else None
        self.pools: dict[tuple, SandboxPool] = {}
        self.lock = asyncio.Lock()

    async def pool(self, spec: ImageSpec) -> SandboxPool:
        key = dataclasses.astuple(spec)
        async with self.lock:
            if key not in self.pools:
                for url in self.urls:
                    image = await in_thread(build_taskpack, spec, url)
                limits = limits_for(spec, self.limits)
                pool = SandboxPool(image, self.size, self.urls, limits, workdir=spec.workdir)
                await pool.start()
                self.pools[key] = pool
        return self.pools[key]

    @contextlib.asynccontextmanager
    async def sandbox(self, spec: ImageSpec) -> AsyncIterator[Sandbox]:
        pool = await self.pool(spec)
        if self.slots:
            await self.slots.acquire()
        try:
            async with pool.sandbox() as sandbox:
                yield sandbox
        finally:
            if self.slots:
                self.slots.release()

    async def close(self) -> None:
        await asyncio.gather(*(pool.close() for pool in self.pools.values()), return_exceptions=True)
        self.pools.clear()

    async def __aenter__(self) -> PoolSet:
        """Remove what killed ptrain processes on this host left behind (nothing else would), then start."""
        removed = [name for url in self.urls for name in await in_thread(remove_leftovers, url)]
        if removed:
            log.warning("removed %d containers left by killed ptrain processes", len(removed))
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()
