"""A private Ray cluster on 127.0.0.1 for tests and benchmarks: a head and more node processes.

    address = ray_cluster.start(temp_dir, nodes=2)   # this process joins it as the driver
    ...
    ray_cluster.stop()                               # leaves it, then `ray stop --force`

Each node has one CPU, as if each were a machine with one core. Token authentication is off: a
token file left by some earlier `ray.init()` would turn it on for the head but not for the nodes
started after it, which then cannot join.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from ptrain.scale.workers import ScaleError, connect

RAY = str(Path(sys.executable).parent / "ray")


def start(temp: Path, nodes: int = 2, object_store_mb: int = 200, timeout_s: float = 300) -> str:
    """Start the cluster (its logs under `temp`), join it, and return its address once every node is up."""
    os.environ["RAY_AUTH_MODE"] = "disabled"  # for the ray processes started here and for this driver
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{s.getsockname()[1]}"
    common = ["--node-ip-address", "127.0.0.1", "--num-cpus", "1", "--object-store-memory",
              str(object_store_mb * 2**20), "--disable-usage-stats"]  # fmt: skip
    _ray("start", "--head", "--port", address.rpartition(":")[2], "--include-dashboard=false", "--temp-dir", str(temp),
         *common, timeout_s=timeout_s)  # fmt: skip
    for _ in range(nodes - 1):
        _ray("start", "--address", address, *common, timeout_s=timeout_s)
    ray = connect(address)
    deadline = time.monotonic() + timeout_s
    while len([n for n in ray.nodes() if n["Alive"]]) < nodes:
        if time.monotonic() > deadline:
            stop()
            raise ScaleError(f"only {len(ray.nodes())} of {nodes} Ray nodes joined within {timeout_s:g} s")
        time.sleep(1)
    return address


def stop() -> None:
    """Leave the cluster (so its raylets' ends are not reported here), then stop every Ray process on this machine."""
    import ray

    ray.shutdown()
    subprocess.run([RAY, "stop", "--force"], timeout=120, capture_output=True)


def _ray(*args: str, timeout_s: float) -> None:
    done = subprocess.run([RAY, *args], timeout=timeout_s, capture_output=True, text=True)
    if done.returncode:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-5:])
        raise ScaleError(f"`ray {' '.join(args[:2])}` failed (exit {done.returncode}):\n{tail}")
