"""Workspace file requests: `write`, `read`, `put_tar` and `get_tar` (server.py runs them as the sandbox user, or as root).

Relative paths are under the workspace; a tar of the workspace is refused past a size or entry count.
"""

from __future__ import annotations

import io
import os
import tarfile

from .user import WORKSPACE

MAX_ENTRIES = 200_000  # a workspace with more files and directories than this is not collected


def resolve(path: str) -> str:
    return path if os.path.isabs(path) else os.path.join(WORKSPACE, path)


class WorkspaceTooLarge(Exception):
    pass


def tar_tree(root: str, max_bytes: int) -> bytes:
    """A tar of `root` built without recursion (any depth) and refused past `max_bytes`.

    Sizes are checked before anything is read, so a sparse 50 GB file or a 900 MB one costs a
    stat, not the memory of the archive; symlinks are archived as links, never followed."""
    buf = io.BytesIO()
    entries = 0
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        stack = [(root, ".")]
        while stack:
            path, arcname = stack.pop()
            entries += 1
            if entries > MAX_ENTRIES:
                raise WorkspaceTooLarge(f"more than {MAX_ENTRIES} files and directories")
            info = tar.gettarinfo(path, arcname=arcname)
            if info is None:  # a socket: nothing to archive
                continue
            if buf.tell() + info.size > max_bytes:
                raise WorkspaceTooLarge(f"more than {max_bytes} bytes (at {arcname}, {info.size} bytes)")
            if info.isreg():
                with open(path, "rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
            if info.isdir():
                names = sorted(os.listdir(path), reverse=True)
                stack += [(os.path.join(path, n), f"{arcname}/{n}") for n in names]
    if buf.tell() > max_bytes:
        raise WorkspaceTooLarge(f"more than {max_bytes} bytes")
    return buf.getvalue()


def handle_file(header: dict, payload: bytes) -> tuple[dict, bytes]:
    op = header.get("op")
    if op == "write":
        path = resolve(header["path"])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        existed = os.path.exists(path)
        with open(path, "ab" if header.get("append") else "wb") as f:
            f.write(payload)
        if header.get("mode") is not None or not existed:  # an edit keeps the file's mode
            os.chmod(path, int(header.get("mode") or 0o644))
        return {}, b""
    if op == "read":
        limit = int(header.get("max_bytes", 1 << 30))
        with open(resolve(header["path"]), "rb") as f:
            data = f.read(limit + 1)
        return {"truncated": len(data) > limit}, data[:limit]
    if op == "put_tar":
        dest = resolve(header["path"])
        os.makedirs(dest, mode=int(header.get("dir_mode", 0o777)), exist_ok=True)
        source = open(header["tar_path"], "rb") if "tar_path" in header else io.BytesIO(payload)
        with source, tarfile.open(fileobj=source) as tar:
            # "tar": no absolute or ../ member names, but symlinks restore as they were made
            tar.extractall(dest, **({"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}))
        return {}, b""
    if op == "get_tar":
        return {}, tar_tree(resolve(header["path"]), int(header.get("max_bytes", 1 << 30)))
    return {"error": f"unknown request {op!r}", "kind": "request"}, b""
