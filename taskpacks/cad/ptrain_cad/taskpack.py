"""The Cad taskpack object: generated and imported parts, the CAD tools, the verifier and gold."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from ptrain.errors import ToolError
from ptrain.sandbox.container import Sandbox
from ptrain.sandbox.images import ImageSpec
from ptrain.taskpack import Probe, Task, ToolCall, Verdict, place_files
from ptrain.tools import EditorTool
from ptrain.tools.submit import SUBMISSION_PATH
from ptrain_cad.generator import PART_FILE, generated_tasks
from ptrain_cad.image import prepare_context
from ptrain_cad.imported import import_dir, load_imported
from ptrain_cad.probes import probes as own_probes
from ptrain_cad.tools import RENDER_TIMEOUT_S, RenderTool, ViewsTool, submit_tool
from ptrain_cad.verifier import SUBMISSION_RECORD, verify_cad

VERSION = "0.2.0"  # 0.2: a failing part earns skill over its bounding-box cuboid, not its IoU


def with_member(tar: bytes, name: str, data: bytes) -> bytes:
    """`tar` with one more file (replacing one of the same name)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(tar)) as src, tarfile.open(fileobj=out, mode="w") as dst:
        for member in src.getmembers():
            if member.name.removeprefix("./") != name:
                dst.addfile(member, src.extractfile(member) if member.isfile() else None)
        info = tarfile.TarInfo(name)
        info.size = len(data)
        dst.addfile(info, io.BytesIO(data))
    return out.getvalue()


@dataclass
class Cad:
    name: str = "cad"
    version: str = VERSION
    render_timeout_s: float = RENDER_TIMEOUT_S  # OpenSCAD runs longer than this are errors (tools and verifier)

    @cached_property
    def image(self) -> ImageSpec:
        # the context lives in ptrain's cache: it needs wheels fetched on the host (see image.py)
        return ImageSpec("cad", prepare_context())

    @cached_property
    def all_tasks(self) -> list[Task]:
        return generated_tasks() + load_imported(import_dir())

    def tasks(self, split: str) -> Iterable[Task]:
        return [task for task in self.all_tasks if task.split == split]

    def tools(self) -> list:
        return [EditorTool(), RenderTool(self.render_timeout_s), ViewsTool(self.render_timeout_s), submit_tool()]

    async def setup(self, task: Task, sandbox: Sandbox) -> None:
        await place_files(sandbox, task.files)

    async def artifact(self, task: Task, sandbox: Sandbox) -> bytes:
        tar = await sandbox.get_tar(".")
        try:
            return with_member(tar, SUBMISSION_RECORD, await sandbox.read_file(SUBMISSION_PATH))
        except ToolError:  # no submit call
            return tar

    async def verify(self, task: Task, artifact: bytes, sandbox: Sandbox) -> Verdict:
        meta, version = task.metadata, f"{self.name}/{self.version}"
        if meta["verifier"] == "imported":
            reference, bodies, align = {"reference.stl": meta["reference_stl"]}, meta["bodies"], True
        else:
            reference, bodies, align = {"reference.scad": meta["reference_scad"].encode()}, None, False
        return await verify_cad(sandbox, artifact, reference, bodies=bodies, align=align,
                                render_timeout_s=self.render_timeout_s, version=version)  # fmt: skip

    def gold(self, task: Task) -> list[ToolCall] | None:
        scad = task.metadata.get("sketch_scad") or task.metadata.get("reference_scad")  # parts.py: sketches
        if scad is None:
            return None
        return [
            ToolCall("str_replace_editor", {"command": "create", "path": PART_FILE, "file_text": scad}),
            ToolCall("submit", {"file": PART_FILE}),
        ]

    def probes(self, task: Task) -> list[Probe]:
        """This verifier's own attacks (see probes.py): the bounding-box cuboid."""
        return own_probes(task)
