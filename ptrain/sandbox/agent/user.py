"""Who runs what, and where: the sandbox user (`PTRAIN_USER`) and the workspace.

The agent starts as root and runs the shell, every command and every workspace file operation as
the sandbox user; without root (an old image, or `--call` from `podman exec`) it runs them as itself.
"""

from __future__ import annotations

import os

WORKSPACE = os.environ.get("PTRAIN_WORKSPACE", "/workspace")


def sandbox_user() -> tuple[int, int] | None:
    """(uid, gid) that commands run as, or None when the agent is not root and runs them as itself."""
    spec = os.environ.get("PTRAIN_USER", "")
    if os.geteuid() != 0 or not spec:
        return None
    uid, _, gid = spec.partition(":")
    return int(uid), int(gid or uid)


USER = sandbox_user()


class as_user:
    """File operations as the sandbox user (effective ids only; the agent stays root underneath)."""

    def __init__(self, root: bool = False):
        self.drop = USER is not None and not root

    def __enter__(self) -> None:
        if self.drop:
            os.setegid(USER[1])
            os.seteuid(USER[0])

    def __exit__(self, *exc) -> None:
        if self.drop:
            os.seteuid(0)
            os.setegid(0)


def become_user() -> None:
    """In a forked child, before exec: the sandbox user for good (no way back to root)."""
    if USER is not None:
        os.setgroups([])
        os.setgid(USER[1])
        os.setuid(USER[0])
