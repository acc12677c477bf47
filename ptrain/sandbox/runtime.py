"""The podman runtime ptrain talks to: its containers.conf, its API service, its client.

Podman from Debian works here with two settings (see DESIGN.md, "This machine, as found"): the
OCI runtime must be `runc`, and default ulimits must stay within the host's hard limits. ptrain
writes those into its own containers.conf under PTRAIN_HOME and points CONTAINERS_CONF at it for
every podman it starts. When no API service answers on ptrain's socket, it starts one.
"""

from __future__ import annotations

import logging
import os
import resource
import shutil
import socket
import subprocess
import time
from functools import cache
from pathlib import Path

import podman
from podman.errors import APIError, NotFound

from ptrain.errors import SandboxError
from ptrain.paths import home

log = logging.getLogger(__name__)

LABEL = "ptrain"  # every container ptrain creates carries this label


def socket_dir(container_name: str) -> Path:
    """Host directory bind-mounted at /run/ptrain in a sandbox; short enough for a socket path."""
    path = home() / "run" / container_name
    if len(str(path / "agent.sock")) > 100:
        path = Path(f"/tmp/ptrain-run-{os.getuid()}") / container_name
    return path


def conf_path() -> Path:
    return home() / "podman" / "containers.conf"


def default_url() -> str:
    return os.environ.get("PTRAIN_PODMAN_URL", f"unix://{home() / 'podman' / 'podman.sock'}")


def ulimit_within_host(kind: int, wanted: int) -> int:
    _, hard = resource.getrlimit(kind)
    return wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)


def containers_conf() -> str:
    nofile = ulimit_within_host(resource.RLIMIT_NOFILE, 4096)
    nproc = ulimit_within_host(resource.RLIMIT_NPROC, 16384)  # podman caps its own at 32768
    return (
        "# Written by ptrain: see ptrain/sandbox/runtime.py.\n"
        "[containers]\n"
        f'default_ulimits = ["nofile={nofile}:{nofile}", "nproc={nproc}:{nproc}"]\n'
        "[engine]\n"
        'runtime = "runc"\n'
        'events_logger = "file"\n' + ("" if Path("/run/systemd/system").is_dir() else 'cgroup_manager = "cgroupfs"\n')
        # without systemd as init there is no systemd cgroup manager to talk to
    )


def write_conf() -> Path:
    """Write ptrain's containers.conf (if it changed) and point this process's podman at it."""
    path = conf_path()
    text = containers_conf()
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    os.environ["CONTAINERS_CONF"] = str(path)
    return path


def podman_env() -> dict[str, str]:
    write_conf()
    return dict(os.environ)


def podman_cli(*args: str, url: str | None = None, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    """Run the podman command line with ptrain's containers.conf (against `url` if remote)."""
    if shutil.which("podman") is None:
        raise SandboxError("podman is not installed", fix="apt-get install podman runc (scripts/quickstart does this)")
    cmd = ["podman", *([f"--url={url}"] if url and url.startswith("ssh://") else []), *args]
    result = subprocess.run(cmd, env=podman_env(), capture_output=True, text=True, **kwargs)
    if check and result.returncode != 0:
        raise SandboxError(f"`{' '.join(cmd)}` failed: {result.stderr.strip()[-2000:]}")
    return result


def answers(url: str, timeout_s: float = 2.0) -> bool:
    try:
        with podman.PodmanClient(base_url=url, timeout=timeout_s) as client:
            return client.ping()
    except Exception:  # any failure to talk means "not answering"
        return False


def ensure_service(url: str | None = None, timeout_s: float = 20.0) -> str:
    """Return a podman API URL that answers, starting a service on a local socket if needed."""
    url = url or default_url()
    if answers(url):
        return url
    if not url.startswith("unix://"):
        raise SandboxError(f"no podman API service answers at {url}", fix="start `podman system service` there")
    sock = Path(url.removeprefix("unix://"))
    sock.parent.mkdir(parents=True, exist_ok=True)
    sock.unlink(missing_ok=True)
    log_path = sock.with_suffix(".log")
    with open(log_path, "ab") as log:  # the service keeps its own copy of the descriptor
        # in ptrain's directory, not the caller's: conmon, the service's child, writes an `oom` file where it
        # runs when a sandbox's command runs out of memory (one appeared in the project root after the tests)
        subprocess.Popen(
            ["podman", "system", "service", "--time=0", url],
            env=podman_env(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # outlives this process, like a daemon
            cwd=sock.parent,
        )
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if sock.exists() and answers(url):
            return url
        time.sleep(0.1)
    raise SandboxError(f"podman system service did not answer on {url} within {timeout_s:.0f} s; see {log_path}")


@cache
def client(url: str) -> podman.PodmanClient:
    """One shared client per service URL (it holds a connection pool)."""
    return podman.PodmanClient(base_url=ensure_service(url), timeout=120)


def owner_label(pid: int | None = None) -> str:
    """The value of the `ptrain.owner` label: which process (this one by default) made a container."""
    return f"{socket.gethostname()}:{pid or os.getpid()}"


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def leftover_containers(url: str) -> list:
    """ptrain containers whose owner process on this host is gone (a crashed or killed run)."""
    here = socket.gethostname()
    found = []
    for container in client(url).containers.list(all=True, filters={"label": LABEL}):
        host, _, pid = container.labels.get(f"{LABEL}.owner", ":").partition(":")
        if host == here and pid.isdigit() and pid_alive(int(pid)):
            continue
        if host and host != here:
            continue  # made by another machine sharing this service: not ours to judge
        found.append(container)
    return found


def remove_leftovers(url: str) -> list[str]:
    """Remove the leftovers and name them; one that is gone by the time we get to it (its removal was under
    way) is fine. One podman cannot stop (its killed conmon never wrote the exit file) is logged and left for
    the next run or `ptrain doctor --clean`: housekeeping never stops the run that does it."""
    names = []
    for container in leftover_containers(url):
        try:
            container.remove(force=True, v=True)
        except NotFound:
            pass
        except APIError as e:
            log.warning("could not remove leftover container %s (left for `ptrain doctor --clean`): %s",
                        container.name, e.explanation or e)  # fmt: skip
            continue
        shutil.rmtree(socket_dir(container.name), ignore_errors=True)
        names.append(container.name)
    return names
