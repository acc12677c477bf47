"""Container images: ptrain's base image and the taskpacks' images built on it.

No registry can be reached, so the base image is a Debian bookworm root filesystem that
`mmdebstrap` builds from the host's own apt sources (minbase, python3, the exec agent), imported
with `podman import`. A taskpack image is a `podman build` of the taskpack's Containerfile with
`BASE_IMAGE` set to the base. Tags are hashes of everything that goes in, so an unchanged image is
found by name and never rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ptrain.errors import ConfigError, SandboxError
from ptrain.sandbox import agent
from ptrain.sandbox.runtime import podman_cli

AGENT_HOME = "/opt/ptrain"
AGENT_DIR = f"{AGENT_HOME}/agent"  # the exec agent's package (ptrain/sandbox/agent/) in every image
# The container's command (`--call <request>` appended for the podman-exec fallback): the agent's
# main() with AGENT_HOME first on sys.path, and without the '' that `-c` puts there: the current
# directory is the workspace, which the sandbox user can write, so nothing in it may shadow a module.
AGENT_COMMAND = [
    "python3",
    "-c",
    f"import sys; sys.path[:] = [{AGENT_HOME!r}] + [p for p in sys.path if p]; from agent.server import main; main()",
]
BASE_NAME = "localhost/ptrain-base"
SUITE = "bookworm"
BASE_PACKAGES = ("python3", "bash", "coreutils", "procps", "ca-certificates", "findutils", "grep", "sed", "tar")
IMAGE_LABEL = "ptrain.image"


@dataclass(frozen=True)
class ImageSpec:
    """How a taskpack's image is built: a Containerfile in a build context, FROM $BASE_IMAGE."""

    name: str  # short name: the image becomes localhost/ptrain-<name>:<tag>
    context: Path
    containerfile: str = "Containerfile"
    workdir: str = "/workspace"  # where the agent works: a writable tmpfs in the sandbox
    # What the image's tasks ask of their sandboxes (an imported task.toml's); None: the pool's limits.
    memory_mb: int | None = None
    cpus: float | None = None
    workspace_mb: int | None = None
    build_timeout_s: float | None = None  # `podman build` past this is a SandboxError
    root: bool = False  # its tasks' agent works as root on a writable root filesystem (SandboxLimits.root)


def host_apt_sources() -> str:
    for path in (Path("/etc/apt/sources.list.d/debian.sources"), Path("/etc/apt/sources.list")):
        if path.exists() and path.read_text().strip():
            return path.read_text()
    raise SandboxError("no apt sources found on this host", fix="mmdebstrap needs /etc/apt/sources.list(.d)")


def agent_files() -> list[Path]:
    """The exec agent's source files: every module of its package (no caches), in a stable order."""
    return sorted(Path(agent.__file__).parent.glob("*.py"))


def base_recipe() -> bytes:
    agent_source = b"\0\0".join(path.name.encode() + b"\0" + path.read_bytes() for path in agent_files())
    return f"{SUITE} {' '.join(BASE_PACKAGES)}\n".encode() + host_apt_sources().encode() + agent_source


def content_tag(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()[:12]


def base_image() -> str:
    return f"{BASE_NAME}:{content_tag(base_recipe())}"


def context_bytes(context: Path) -> bytes:
    """Every file of a build context, with its relative path, in a stable order."""
    if not context.is_dir():
        raise ConfigError(f"image build context {context} is not a directory")
    parts = []
    for path in sorted(p for p in context.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        parts.append(str(path.relative_to(context)).encode() + b"\0" + path.read_bytes())
    return b"\0\0".join(parts)


def taskpack_image(spec: ImageSpec) -> str:
    return f"localhost/ptrain-{spec.name}:{content_tag(base_image().encode(), context_bytes(spec.context))}"


def exists(image: str, url: str | None = None) -> bool:
    return podman_cli("image", "exists", image, url=url, check=False).returncode == 0


def build_base(url: str | None = None, force: bool = False) -> str:
    """Build ptrain-base with mmdebstrap + podman import, unless an identical one exists."""
    image = base_image()
    if exists(image, url) and not force:
        return image
    with tempfile.TemporaryDirectory(prefix="ptrain-base-") as tmp:
        rootfs = Path(tmp) / "rootfs.tar"
        agent_dir = Path(tmp) / "agent"
        agent_dir.mkdir()
        for path in agent_files():
            (agent_dir / path.name).write_bytes(path.read_bytes())
        hooks = [
            'chroot "$1" useradd --create-home --uid 1000 --shell /bin/bash agent',
            f'mkdir -p "$1/workspace" "$1/run/ptrain" "$1{AGENT_HOME}"',
            'chown 1000:1000 "$1/workspace"',
            f'cp -r {agent_dir} "$1{AGENT_DIR}"',
        ]
        cmd = ["mmdebstrap", "--variant=minbase", f"--include={','.join(BASE_PACKAGES)}"]
        cmd += [f"--customize-hook={hook}" for hook in hooks]
        cmd += [SUITE, str(rootfs), "-"]
        done = subprocess.run(cmd, input=host_apt_sources(), capture_output=True, text=True)
        if done.returncode != 0:
            raise SandboxError(f"mmdebstrap failed: {done.stderr.strip()[-3000:]}", fix="apt-get install mmdebstrap")
        changes = [
            f"CMD {json.dumps(AGENT_COMMAND)}",
            "USER 1000:1000",
            "WORKDIR /workspace",
            "ENV HOME=/home/agent",
            f"LABEL {IMAGE_LABEL}=base",
        ]
        podman_cli("import", *[f"--change={c}" for c in changes], str(rootfs), image, url=url)
    return image


def build_taskpack(spec: ImageSpec, url: str | None = None, force: bool = False) -> str:
    """`podman build` a taskpack's Containerfile on the base image, unless an identical one exists."""
    image = taskpack_image(spec)
    if exists(image, url) and not force:
        return image
    base = build_base(url)
    containerfile = spec.context / spec.containerfile
    if not containerfile.is_file():
        raise ConfigError(f"taskpack image {spec.name!r}: no {spec.containerfile} in {spec.context}")
    try:
        podman_cli(
            "build", "--network=host", f"--file={containerfile}", f"--build-arg=BASE_IMAGE={base}",
            f"--label={IMAGE_LABEL}={spec.name}", f"--tag={image}", str(spec.context), url=url,
            timeout=spec.build_timeout_s,
        )  # fmt: skip
    except subprocess.TimeoutExpired as e:
        raise SandboxError(
            f"building image {spec.name!r} took longer than its build timeout ({spec.build_timeout_s:g} s)",
            fix="raise the task's build_timeout_sec, or build it once with `ptrain images build` on a faster host",
        ) from e
    return image


def list_images(url: str | None = None) -> list[dict]:
    """ptrain's images on a host: name, tag, size, created."""
    out = podman_cli("images", f"--filter=label={IMAGE_LABEL}", "--format=json", url=url).stdout
    rows = []
    for image in json.loads(out or "[]"):
        for name in image.get("Names") or ["<none>"]:
            rows.append({
                "name": name,
                "kind": (image.get("Labels") or {}).get(IMAGE_LABEL, ""),
                "size_mb": image.get("Size", 0) / 1e6,
                "created": image.get("CreatedAt", ""),
            })  # fmt: skip
    return rows
