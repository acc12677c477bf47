"""The warm pool: fresh containers per episode, bounded concurrency, clean shutdown, several hosts."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import pytest
from podman.errors import APIError, NotFound

from ptrain.sandbox import PoolSet, SandboxPool, runtime
from ptrain.sandbox.runtime import answers, client, ensure_service, home


def pool_containers(url: str, pool: SandboxPool) -> list:
    return client(url).containers.list(all=True, filters={"label": f"ptrain.pool={pool.id}"})


async def test_every_episode_gets_a_fresh_container(base_image, podman_url):
    async with SandboxPool(base_image, size=2, urls=[podman_url]) as pool:
        async with pool.sandbox() as first:
            await first.exec("echo dirty > /workspace/mark")
            first_name = first.name
        async with pool.sandbox() as second:
            assert second.name != first_name
            assert (await second.exec("ls /workspace")).output == ""


async def test_max_active_bounds_how_many_are_out(base_image, podman_url):
    async with SandboxPool(base_image, size=1, urls=[podman_url], max_active=2) as pool:
        peak = 0

        async def episode():
            nonlocal peak
            async with pool.sandbox() as box:
                peak = max(peak, len(pool.active))
                await box.exec("sleep 0.3")

        await asyncio.gather(*(episode() for _ in range(5)))
        assert peak == 2


async def test_close_leaves_no_container_behind(base_image, podman_url):
    pool = SandboxPool(base_image, size=3, urls=[podman_url])
    await pool.start()
    held = await pool.acquire()
    await held.exec("true")
    assert len(pool_containers(podman_url, pool)) >= 3
    await pool.close()
    assert pool_containers(podman_url, pool) == []


async def test_a_sandbox_that_died_while_idle_is_replaced(base_image, podman_url):
    async with SandboxPool(base_image, size=1, urls=[podman_url]) as pool:
        idle = pool.idle._queue[0]
        idle.container.kill(signal="SIGKILL")
        async with pool.sandbox() as box:
            assert box.name != idle.name
            assert (await box.exec("echo ok")).output == "ok\n"


@pytest.fixture
def second_service():
    """A second podman API service on its own socket, as a second "host"."""
    sock = home() / "podman" / "second.sock"
    url = f"unix://{sock}"
    ensure_service(url)
    yield url
    subprocess.run(["pkill", "-f", f"podman system service --time=0 {url}"], check=False)


async def test_a_pool_spreads_containers_over_several_services(base_image, podman_url, second_service):
    assert answers(second_service)
    async with SandboxPool(base_image, size=4, urls=[podman_url, second_service]) as pool:
        boxes = [await pool.acquire() for _ in range(4)]
        assert sorted(box.url for box in boxes) == sorted([podman_url] * 2 + [second_service] * 2)
        results = await asyncio.gather(*(box.exec("hostname") for box in boxes))
        assert all(r.output == "sandbox\n" for r in results)
        for box in boxes:
            await pool.release(box)


def test_a_service_ptrain_starts_runs_in_ptrains_directory_not_the_callers(second_service):
    # conmon writes `oom` into its working directory when a sandbox's command runs out of memory
    pid = subprocess.run(["pgrep", "-f", f"podman system service --time=0 {second_service}"],
                         capture_output=True, text=True).stdout.split()[0]  # fmt: skip
    assert Path(f"/proc/{pid}/cwd").resolve() == (home() / "podman").resolve()


def test_podman_is_installed():
    assert shutil.which("podman") and shutil.which("runc")


class StuckContainer:
    """A leftover podman cannot stop: its conmon was killed with the run, so no exit file ever appears."""

    name = "ptrain-stuck"

    def remove(self, **kwargs):
        raise APIError("500 Server Error", explanation="cannot remove container as it could not be stopped")


class GoneContainer:
    name = "ptrain-gone"

    def remove(self, **kwargs):
        raise NotFound("no such container")


class LeftContainer:
    name = "ptrain-left"
    removed = False

    def remove(self, **kwargs):
        self.removed = True


async def test_a_leftover_podman_cannot_remove_is_logged_and_the_pool_still_starts(monkeypatch, caplog):
    left = LeftContainer()
    monkeypatch.setattr(runtime, "leftover_containers", lambda url: [StuckContainer(), GoneContainer(), left])
    async with PoolSet(urls=["unix:///nowhere.sock"]) as pools:
        assert pools.pools == {}
    assert left.removed
    assert "could not remove leftover container ptrain-stuck" in caplog.text
    assert "could not be stopped" in caplog.text
    assert "removed 2 containers left by killed ptrain processes" in caplog.text
