"""The CAD image's build context, prepared on the host under ptrain's cache.

`pip install` can't reach PyPI inside `podman build`, so the image's Python packages (numpy,
trimesh, manifold3d, pinned in image/requirements.txt) come in as wheels that the host fetches
once with `pip download` for the sandbox's Python (3.11, manylinux x86_64). The context is a
directory under ~/.cache/ptrain/images/cad/ holding the Containerfile, the pins, the measurement
scripts (measure/) and those wheels; `ptrain images build` builds it like any other context, and
its tag (a hash of every file in it) changes whenever a script or a pin does.

Offline machines: set PTRAIN_CAD_WHEELS to a directory that already holds the pinned wheels.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ptrain import paths
from ptrain.errors import ConfigError

PACKAGE = Path(__file__).parent
PYTHON_VERSION = "3.11"  # Debian bookworm's python3, the base image's
PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_28_x86_64")


def pins() -> list[str]:
    lines = (PACKAGE / "image" / "requirements.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def wheel_prefix(pin: str) -> str:
    """How the file name of the wheel for `name==version` starts."""
    name, version = pin.split("==")
    return f"{name.replace('-', '_').lower()}-{version}-"


def has_wheel(wheels: Path, pin: str) -> bool:
    return any(w.name.lower().startswith(wheel_prefix(pin)) for w in wheels.glob("*.whl"))


def fetch_wheels(dest: Path, requirements: list[str]) -> None:
    """`pip download` the pinned wheels for the sandbox's Python into `dest` (replaced whole)."""
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--python-version",
        PYTHON_VERSION,
    ]
    cmd += [arg for platform in PLATFORMS for arg in ("--platform", platform)]
    if os.environ.get("PTRAIN_CAD_WHEELS"):
        cmd += ["--no-index", "--find-links", os.environ["PTRAIN_CAD_WHEELS"]]
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".wheels-") as tmp:
        done = subprocess.run([*cmd, "-d", tmp, *requirements], capture_output=True, text=True)
        if done.returncode != 0:
            raise ConfigError(
                f"could not fetch the CAD image's wheels ({', '.join(requirements)}): {done.stderr.strip()[-1500:]}",
                fix="check that PyPI is reachable, or set PTRAIN_CAD_WHEELS to a directory holding these wheels",
            )
        shutil.rmtree(dest, ignore_errors=True)
        os.replace(tmp, dest)
        dest.chmod(0o755)
        Path(tmp).mkdir()  # for TemporaryDirectory's cleanup


def sync_file(src: Path, dest: Path) -> None:
    if not dest.exists() or dest.read_bytes() != src.read_bytes():
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.tmp{os.getpid()}")
        tmp.write_bytes(src.read_bytes())
        os.replace(tmp, dest)


def prepare_context(root: Path | None = None) -> Path:
    """The build context, made or brought up to date: files copied, wheels fetched if missing."""
    root = root or paths.home() / "images" / "cad"
    root.mkdir(parents=True, exist_ok=True)
    for name in ("Containerfile", "requirements.txt"):
        sync_file(PACKAGE / "image" / name, root / name)
    scripts = {p.name for p in (PACKAGE / "measure").glob("*.py")}
    for name in scripts:
        sync_file(PACKAGE / "measure" / name, root / "measure" / name)
    for stale in (root / "measure").iterdir():
        if stale.name not in scripts:
            shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
    wanted = pins()
    wheels = root / "wheels"
    if not wheels.is_dir() or not all(has_wheel(wheels, pin) for pin in wanted):
        fetch_wheels(wheels, wanted)
    for stale in wheels.glob("*.whl"):
        if not any(stale.name.lower().startswith(wheel_prefix(pin)) for pin in wanted):
            stale.unlink()
    return root
