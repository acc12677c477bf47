"""The TerminalCoding taskpack object: tasks, tools, setup, artifact, verifier and gold."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ptrain.errors import SandboxError
from ptrain.sandbox.container import Sandbox
from ptrain.sandbox.images import ImageSpec
from ptrain.taskpack import Probe, Task, ToolCall, Verdict, place_files
from ptrain.tools import BashTool, EditorTool, SubmitTool
from ptrain_terminal_coding.generated import generated_tasks
from ptrain_terminal_coding.harbor import import_dir, load_imported, verify_imported
from ptrain_terminal_coding.mutation import mutation_tasks
from ptrain_terminal_coding.mutation.probes import mutation_probes
from ptrain_terminal_coding.verifier import run_hidden_tests
from ptrain_terminal_coding.written import load_written

VERSION = "0.1.0"


@dataclass
class TerminalCoding:
    name: str = "terminal-coding"
    version: str = VERSION
    image: ImageSpec = field(default_factory=lambda: ImageSpec("terminal-coding", Path(__file__).parent / "image"))

    @cached_property
    def all_tasks(self) -> list[Task]:
        # written by hand, generated shell basics, planted bugs (mutation/), and `ptrain taskpacks import-harbor` imports
        return load_written() + generated_tasks() + mutation_tasks() + load_imported(import_dir())

    def tasks(self, split: str) -> Iterable[Task]:
        return [task for task in self.all_tasks if task.split == split]

    def tools(self) -> list:
        return [BashTool(), EditorTool(), SubmitTool()]

    async def setup(self, task: Task, sandbox: Sandbox) -> None:
        await place_files(sandbox, task.files)
        if task.setup:
            result = await sandbox.exec(task.setup, timeout_s=120)
            if not result.ok:
                raise SandboxError(f"setup of task {task.id} failed ({result.exit_code}): {result.output[-1000:]}")

    async def artifact(self, task: Task, sandbox: Sandbox) -> bytes:
        if task.metadata.get("root"):  # the agent worked as root: its whole container state is the artifact
            return await sandbox.get_state(task.metadata["workdir"])
        return await sandbox.get_tar(".")

    async def verify(self, task: Task, artifact: bytes, sandbox: Sandbox) -> Verdict:
        meta = task.metadata
        if meta.get("verifier") == "harbor":
            return await verify_imported(task, artifact, sandbox, version=f"{self.name}/{self.version}")
        return await run_hidden_tests(
            sandbox,
            artifact,
            meta["tests"],
            pythonpath=meta["pythonpath"],
            timeout_s=meta["timeout_s"],
            version=f"{self.name}/{self.version}",
        )

    def probes(self, task: Task) -> list[Probe]:
        """Attacks on this taskpack's own tasks, beside the shared ones (ptrain/probes.py)."""
        return mutation_probes(task) if "mutant" in task.metadata else []

    def gold(self, task: Task) -> list[ToolCall] | None:
        solution = task.metadata.get("solution")
        if solution is None:
            return None
        fix = task.metadata.get("fix")
        if fix:  # a mutant: look at the failing tests, then fix the line, as a developer would
            project = task.metadata["pythonpath"][0]
            look = f"cd {project} && python3 -m pytest -q -x 2>&1 | tail -n 15"
            return [ToolCall("bash", {"command": look}), ToolCall("bash", {"command": fix}), ToolCall("submit", {})]
        # an imported task's solution gets the agent's time its task.toml gives (the bash tool allows 600 s at most)
        timeout_s = max(300.0, float(task.metadata.get("agent_timeout_s") or 0))
        return [ToolCall("bash", {"command": solution, "timeout_s": timeout_s}), ToolCall("submit", {})]
