"""Python packages for an imported task's image, as wheels the host fetches once (pinned, cached).

`pip install` can't reach PyPI inside `podman build` here, and a sandbox has no network at all. So
every Python requirement a task has (its Dockerfile's and its setup scripts' `pip install`, its test
script's `uvx --with pytest==8.4.1 ...`, uv itself) is resolved once on the host with `pip download`
for the image's Python (Debian bookworm's 3.11, manylinux x86_64), with every dependency, and kept
under `$PTRAIN_HOME/wheels/<hash of the requirements>/` with `pins.txt` (each wheel as
`name==version`). The import links those wheels into the task's build context (`ptrain-wheels/`),
and the Containerfile installs from there with `--no-index --find-links` (dockerfile.py).

Offline machines: set PTRAIN_HARBOR_WHEELS to a directory that already holds the wheels.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ptrain import paths
from ptrain.errors import ConfigError

PYTHON_VERSION = "3.11"  # the image's python3 (Debian bookworm), whatever python the task's FROM named
PLATFORM = "manylinux_2_36_x86_64"  # bookworm's glibc 2.36
# every tag a wheel for that glibc may carry (pip expands none of them by itself)
PLATFORMS = [f"manylinux_2_{v}_x86_64" for v in range(36, 4, -1)] + [
    f"manylinux{v}_x86_64" for v in ("2014", "2010", "1")
]
CONTEXT_DIR = "ptrain-wheels"  # in the build context
IMAGE_DIR = "/opt/ptrain/wheels"  # in the image
WHEEL = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)-.*\.whl$")


def pins_of(folder: Path) -> list[str]:
    """`name==version` of every wheel in `folder`, sorted."""
    pins = []
    for wheel in folder.glob("*.whl"):
        if m := WHEEL.match(wheel.name):
            pins.append(f"{m['name'].replace('_', '-').lower()}=={m['version']}")
    return sorted(pins)


def cache_dir(requirements: list[str]) -> Path:
    key = hashlib.sha256(f"{PYTHON_VERSION} {PLATFORM}\n{chr(10).join(sorted(requirements))}".encode())
    return paths.home() / "wheels" / f"py{PYTHON_VERSION}-{key.hexdigest()[:16]}"


def fetch(requirements: list[str]) -> Path:
    """The wheels for `requirements` (pip itself added) and all they depend on: from the cache, or
    downloaded into it once. ConfigError with pip's words when they can't be had (a package with no
    wheel for this Python and platform, a version that does not exist, no PyPI)."""
    wanted = sorted(set(requirements) | {"pip"})
    folder = cache_dir(wanted)
    if (folder / "pins.txt").is_file():
        return folder
    cmd = [sys.executable, "-m", "pip", "download", "--only-binary=:all:", "--python-version", PYTHON_VERSION,
           "--implementation", "cp", "--disable-pip-version-check", "--quiet"]  # fmt: skip
    cmd += [arg for platform in PLATFORMS for arg in ("--platform", platform)]
    if os.environ.get("PTRAIN_HARBOR_WHEELS"):
        cmd += ["--no-index", "--find-links", os.environ["PTRAIN_HARBOR_WHEELS"]]
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent, prefix=".download-") as tmp:
        done = subprocess.run([*cmd, "-d", tmp, *wanted], capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            errors = [line for line in done.stderr.splitlines() if "ERROR" in line] or done.stderr.splitlines()
            raise ConfigError(
                f"no wheels for {', '.join(wanted)} (Python {PYTHON_VERSION}, {PLATFORM}): " + " ".join(errors)[-800:],
                fix="check that PyPI is reachable, or set PTRAIN_HARBOR_WHEELS to a directory holding these wheels",
            )
        (Path(tmp) / "pins.txt").write_text("\n".join(pins_of(Path(tmp))) + "\n")
        (Path(tmp) / "requirements.txt").write_text("\n".join(wanted) + "\n")
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(tmp, folder)
        Path(tmp).mkdir()  # for TemporaryDirectory's cleanup
    return folder


def place(folder: Path, context: Path) -> list[str]:
    """Link (or copy) the wheels of `folder` into the build context; their pins."""
    out = context / CONTEXT_DIR
    out.mkdir(parents=True, exist_ok=True)
    for wheel in sorted(folder.glob("*.whl")):
        try:
            os.link(wheel, out / wheel.name)
        except OSError:  # another filesystem
            shutil.copy2(wheel, out / wheel.name)
    pins = pins_of(out)
    (out / "pins.txt").write_text("\n".join(pins) + "\n")
    return pins


def pip_wheel(context: Path) -> str:
    """The file name of pip's own wheel in the context (run from the wheel to install pip itself)."""
    return next(w.name for w in sorted((context / CONTEXT_DIR).glob("pip-*.whl")))
