"""Where ptrain keeps its files on this machine: one place every part may import.

$PTRAIN_HOME (default $XDG_CACHE_HOME/ptrain, else ~/.cache/ptrain)
  models/NAME/          a packaged model converted for transformers (engine/models.py)
  imported/TASKPACK/    tasks imported from a public collection (`ptrain taskpacks import-*`)
  images/NAME/          an image's generated build context (a taskpack's Containerfile and pins)
  podman/, run/         the podman service's config and the sandboxes' sockets (sandbox/runtime.py)
"""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    """Where ptrain keeps its caches, sockets and images' build files (created if missing)."""
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ptrain"
    path = Path(os.environ.get("PTRAIN_HOME", default))
    path.mkdir(parents=True, exist_ok=True)
    return path
