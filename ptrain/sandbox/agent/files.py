"""Workspace file requests: `write`, `read`, `put_tar` and `get_tar` (server.py runs them as the sandbox user, or as root),
and, for a task whose agent works as root, `get_state` and `put_state`: the container's whole state.

Relative paths are under the workspace; a tar of the workspace is refused past a size or entry count.
A state tar holds `rootfs/<path>` for each path the container changed or added (the host lists them
from `podman diff`), `workspace/...` for the workdir (a tmpfs, so not in the diff) and `state.json`
with the paths it deleted; restoring it into a fresh container of the same image gives what
`podman commit` would, and it is stored like any artifact. ptrain's own paths are never restored.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile

from .user import WORKSPACE

MAX_ENTRIES = 200_000  # a workspace with more files and directories than this is not collected
# Never part of a container's state: kernel and runtime file systems, the scratch tmpfs, ptrain's own files
# (the agent, the pristine image the harness runs from) and its socket directory.
NOT_STATE = ("/proc", "/sys", "/dev", "/run", "/tmp", "/opt/ptrain")


def resolve(path: str) -> str:
    return path if os.path.isabs(path) else os.path.join(WORKSPACE, path)


class WorkspaceTooLarge(Exception):
    pass


def tar_tree(root: str, max_bytes: int) -> bytes:
    """A tar of `root` built without recursion (any depth) and refused past `max_bytes`.

    Sizes are checked before anything is read, so a sparse 50 GB file or a 900 MB one costs a
    stat, not the memory of the archive; symlinks are archived as links, never followed."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        add_tree(tar, buf, root, ".", max_bytes)
    if buf.tell() > max_bytes:
        raise WorkspaceTooLarge(f"more than {max_bytes} bytes")
    return buf.getvalue()


def add_entry(tar: tarfile.TarFile, buf: io.BytesIO, path: str, arcname: str, max_bytes: int) -> tarfile.TarInfo | None:
    """One file, directory or link (never followed) into `tar`; None for a socket. Past `max_bytes`: refused."""
    info = tar.gettarinfo(path, arcname=arcname)
    if info is None:  # a socket: nothing to archive
        return None
    if buf.tell() + info.size > max_bytes:
        raise WorkspaceTooLarge(f"more than {max_bytes} bytes (at {arcname}, {info.size} bytes)")
    if info.isreg():
        with open(path, "rb") as f:
            tar.addfile(info, f)
    else:
        tar.addfile(info)
    return info


def add_tree(tar: tarfile.TarFile, buf: io.BytesIO, root: str, arcroot: str, max_bytes: int, entries: int = 0) -> int:
    stack = [(root, arcroot)]
    while stack:
        path, arcname = stack.pop()
        entries += 1
        if entries > MAX_ENTRIES:
            raise WorkspaceTooLarge(f"more than {MAX_ENTRIES} files and directories")
        info = add_entry(tar, buf, path, arcname, max_bytes)
        if info is not None and info.isdir():
            names = sorted(os.listdir(path), reverse=True)
            stack += [(os.path.join(path, n), f"{arcname}/{n}") for n in names]
    return entries


def within(path: str, root: str) -> bool:
    path, root = os.path.normpath(path), os.path.normpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


def is_state(path: str, workdir: str) -> bool:
    """Whether an absolute path belongs to a container's state (not ptrain's, the kernel's or the workdir's)."""
    path = os.path.normpath(path)
    return os.path.isabs(path) and path != "/" and not any(within(path, top) for top in (*NOT_STATE, workdir))


def parent_in_state(path: str, workdir: str) -> bool:
    """Whether the directory `path` would be written in, links resolved, is the root or the state's."""
    parent = os.path.realpath(os.path.dirname(path))
    return parent == "/" or is_state(parent, workdir)


def state_tar(changes: list, workdir: str, max_bytes: int) -> bytes:
    """The container's state: its changed and added paths (`changes`: [path, kind] from `podman diff`,
    kind 2 deleted), its workdir, and the deleted paths in state.json."""
    buf, deleted = io.BytesIO(), []
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        entries = 0
        for path, kind in sorted((os.path.normpath(p), int(k)) for p, k in changes):
            if not is_state(path, workdir):
                continue
            if kind == 2:
                deleted.append(path)
            elif os.path.lexists(path):
                entries += 1
                if entries > MAX_ENTRIES:
                    raise WorkspaceTooLarge(f"more than {MAX_ENTRIES} changed files and directories")
                add_entry(tar, buf, path, "rootfs" + path, max_bytes)
        add_tree(tar, buf, workdir, "workspace", max_bytes, entries)
        manifest = json.dumps({"deleted": deleted, "workdir": workdir}).encode()
        info = tarfile.TarInfo("state.json")
        info.size = len(manifest)
        tar.addfile(info, io.BytesIO(manifest))
    if buf.tell() > max_bytes:
        raise WorkspaceTooLarge(f"more than {max_bytes} bytes")
    return buf.getvalue()


def restore_state(source, workdir: str) -> dict:
    """A state tar into this (fresh) container: deletions first, then the changed paths at /, then
    the workdir. A member outside the state (ptrain's paths, /proc, ..) or reached through a link
    that leads there is skipped and counted, never written."""
    with tarfile.open(fileobj=source) as tar:
        members = tar.getmembers()
        manifest = next((m for m in members if m.name == "state.json"), None)
        deleted = json.loads(tar.extractfile(manifest).read())["deleted"] if manifest else []
        skipped = 0
        for path in deleted:
            if not is_state(path, workdir) or not parent_in_state(path, workdir):
                skipped += 1
            elif os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            elif os.path.lexists(path):
                os.unlink(path)
        for member in members:
            top, _, rest = member.name.partition("/")
            if top == "rootfs" and rest:
                target, dest = "/" + os.path.normpath(rest), "/"
                if ".." in rest.split("/") or not is_state(target, workdir) or not parent_in_state(target, workdir):
                    skipped += 1
                    continue
            elif top == "workspace" and rest:
                target, dest = os.path.join(workdir, os.path.normpath(rest)), workdir
                if ".." in rest.split("/") or not within(os.path.realpath(os.path.dirname(target)), workdir):
                    skipped += 1
                    continue
            else:
                continue
            member.name = os.path.relpath(target, dest)
            if member.islnk():  # a hard link names another member: where that one was restored
                link_top, _, link_rest = member.linkname.partition("/")
                linked = "/" + link_rest if link_top == "rootfs" else os.path.join(workdir, link_rest)
                member.linkname = os.path.relpath(linked, dest)
            tar.extract(
                member, dest, set_attrs=True, **({"filter": "fully_trusted"} if hasattr(tarfile, "tar_filter") else {})
            )
    return {"deleted": len(deleted), "skipped": skipped}


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
    if op == "get_state":
        return {}, state_tar(header["changes"], header["workdir"], int(header.get("max_bytes", 1 << 30)))
    if op == "put_state":
        source = open(header["tar_path"], "rb") if "tar_path" in header else io.BytesIO(payload)
        with source:
            return restore_state(source, header["workdir"]), b""
    return {"error": f"unknown request {op!r}", "kind": "request"}, b""
