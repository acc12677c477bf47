"""The CAD tools: `render` and `views` run the image's cadtool on a .scad file in the sandbox;
`submit` names the file to be scored. (Files are written with ptrain's `str_replace_editor`.)

Both tools only measure the model's own part; nothing here knows the reference.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ptrain.sandbox.container import Sandbox
from ptrain.taskpack import WORKSPACE, Observation
from ptrain.tools import SubmitTool, truncate_middle

CADTOOL = "python3 /opt/ptrain-cad/cadtool.py"
RENDER_TIMEOUT_S = 120.0
FILE_ARG = {"file": {"type": "string", "description": "Path of the .scad file (absolute, or relative to /workspace)."}}


def absolute(path: str) -> str:
    return path if path.startswith("/") else f"{WORKSPACE}/{path}"


def schema(name: str, description: str) -> dict:
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": FILE_ARG, "required": ["file"]},
    }


async def run_cadtool(sandbox: Sandbox, command: str, path: str, timeout_s: float) -> Observation:
    env = f"PTRAIN_CAD_RENDER_TIMEOUT_S={timeout_s:g}"
    result = await sandbox.exec(f"{env} {CADTOOL} {command} {shlex.quote(absolute(path))}", timeout_s=timeout_s + 30)
    text = truncate_middle(result.output, 12_000, 300)
    if result.timed_out:
        return Observation(text + f"\n[{command} timed out after {timeout_s:g} s]", is_error=True)
    return Observation(text, is_error=result.exit_code != 0)


@dataclass
class RenderTool:
    timeout_s: float = RENDER_TIMEOUT_S
    name: str = "render"
    schema: Mapping[str, Any] = field(
        default_factory=lambda: schema(
            "render",
            "Render an OpenSCAD file to a solid and measure it: OpenSCAD errors and warnings, whether it is "
            "a valid watertight solid, the number of separate bodies and through-holes, volume and bounding box.",
        )
    )

    async def __call__(self, sandbox: Sandbox, arguments: Mapping[str, Any]) -> Observation:
        return await run_cadtool(sandbox, "render", str(arguments["file"]), self.timeout_s)


@dataclass
class ViewsTool:
    timeout_s: float = RENDER_TIMEOUT_S
    name: str = "views"
    schema: Mapping[str, Any] = field(
        default_factory=lambda: schema(
            "views",
            "Render an OpenSCAD file and show it as three character grids: from the top, the front and the side. "
            "Each cell is a digit giving how near the surface is to the viewer (9 nearest), blank where there is nothing.",
        )
    )

    async def __call__(self, sandbox: Sandbox, arguments: Mapping[str, Any]) -> Observation:
        return await run_cadtool(sandbox, "views", str(arguments["file"]), self.timeout_s)


def submit_tool() -> SubmitTool:
    return SubmitTool(
        description="Submit the finished part: the .scad file is rendered and compared with the drawing. Ends the episode.",
        properties=FILE_ARG,
        required=("file",),
    )
