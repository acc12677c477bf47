"""`submit`: the model says it is done. Its arguments (an answer, a file) are kept in the sandbox,
outside the workspace (so `git status` and the workspace tar stay the model's own); a taskpack
whose verifier needs them reads SUBMISSION_PATH when it collects the artifact."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ptrain.sandbox.container import Sandbox
from ptrain.taskpack import Observation

SUBMISSION_PATH = "/tmp/.ptrain/submission.json"


@dataclass
class SubmitTool:
    description: str = "Call when the task is done. Ends the episode; the result is then checked."
    properties: Mapping[str, Any] = field(default_factory=dict)  # e.g. {"answer": {"type": "string"}}
    required: tuple[str, ...] = ()
    name: str = "submit"

    @property
    def schema(self) -> Mapping[str, Any]:
        params = {"type": "object", "properties": dict(self.properties), "required": list(self.required)}
        return {"name": self.name, "description": self.description, "parameters": params}

    async def __call__(self, sandbox: Sandbox, arguments: Mapping[str, Any]) -> Observation:
        await sandbox.write_file(SUBMISSION_PATH, json.dumps(dict(arguments)))
        return Observation("Submitted.", done=True)
