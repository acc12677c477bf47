"""Taskpacks: ptrain's one plug-in axis, found through the entry-point group `ptrain.taskpacks`.

A taskpack is a pip-installable package whose entry point names an object that satisfies the
`Taskpack` protocol below: a container image, tasks by split, a tool adapter (tools with JSON
schemas, acting on a sandbox), a way to set a task up and collect its artifact, a verifier that
scores the artifact in a fresh sandbox, and gold solutions as tool calls. Loading checks the
object, so a broken plug-in is an error naming its package and what is wrong, never a crash mid-run.

Data crossing the boundary is frozen dataclasses: `Task`, `ToolCall`, `Observation`, `Verdict`,
`Probe`. A taskpack may also have `probes(task) -> list[Probe]`: adversarial episodes of its own
(attacks on its verifier), which `ptrain taskpacks check` replays beside the shared ones in
`ptrain/probes.py`; every probe must score 0.
"""

from __future__ import annotations

import hashlib
import inspect
import io
import tarfile
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Protocol, runtime_checkable

from ptrain.errors import ConfigError
from ptrain.sandbox.container import Sandbox
from ptrain.sandbox.images import ImageSpec

GROUP = "ptrain.taskpacks"
SPLITS = ("train", "dev", "test")
DIFFICULTIES = ("easy", "medium", "hard")
WORKSPACE = "/workspace"


@dataclass(frozen=True)
class Task:
    id: str  # stable and unique within its taskpack: stores, splits and resumes key on it
    instruction: str  # what the model is asked to do
    category: str
    difficulty: str  # one of DIFFICULTIES
    split: str  # one of SPLITS; see `split_of`
    files: Mapping[str, bytes] = field(default_factory=dict)  # initial workspace, relative paths
    setup: str = ""  # shell commands run in the workspace before the model starts
    image: ImageSpec | None = None  # overrides the taskpack's image (e.g. imported tasks)
    metadata: Mapping[str, Any] = field(default_factory=dict)  # the taskpack's own (hidden) data


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: Mapping[str, Any]
    id: str = ""


@dataclass(frozen=True)
class Observation:
    """What a tool gives back to the model. `done` ends the episode (submit)."""

    content: str
    is_error: bool = False
    done: bool = False


@dataclass(frozen=True)
class Verdict:
    reward: float  # in [0, 1]
    passed: bool
    details: Mapping[str, Any] = field(default_factory=dict)
    verifier_version: str = ""


@dataclass(frozen=True)
class Probe:
    """An adversarial episode: tool calls that try to earn reward without doing the task.

    `ptrain taskpacks check` replays it as a real episode (fresh sandbox, setup, the calls, the
    artifact, verification in another fresh sandbox) and requires a reward of 0: a probe that
    scores is a hole in the verifier that reinforcement learning would find and learn."""

    name: str  # short and stable, e.g. "atexit-rewrite": the check's table has a column per name
    calls: tuple[ToolCall, ...]
    description: str = ""  # what it tries, for the check's table and docs


@runtime_checkable
class Tool(Protocol):
    """One tool: a JSON schema in OpenAI/Hermes function-calling form, and what it does."""

    name: str
    schema: Mapping[str, Any]  # {"name", "description", "parameters": JSON schema}

    async def __call__(self, sandbox: Sandbox, arguments: Mapping[str, Any]) -> Observation: ...


@runtime_checkable
class Taskpack(Protocol):
    name: str
    version: str
    image: ImageSpec

    def tasks(self, split: str) -> Iterable[Task]: ...

    def tools(self) -> list[Tool]:
        """Fresh tool instances for one episode (tools may keep per-episode state, e.g. undo)."""
        ...

    async def setup(self, task: Task, sandbox: Sandbox) -> None:
        """Put the task's initial state into a fresh sandbox (usually `place_files`)."""
        ...

    async def artifact(self, task: Task, sandbox: Sandbox) -> bytes:
        """The final state to verify later (usually a tar of the workspace)."""
        ...

    async def verify(self, task: Task, artifact: bytes, sandbox: Sandbox) -> Verdict:
        """Score an artifact in a fresh sandbox; hidden tests enter only now."""
        ...

    def gold(self, task: Task) -> list[ToolCall] | None:
        """A reference solution as tool calls, or None where there is none."""
        ...


REQUIRED = ("name", "version", "image", "tasks", "tools", "setup", "artifact", "verify", "gold")
ASYNC = ("setup", "artifact", "verify")


def split_of(task_id: str, dev: float = 0.1, test: float = 0.15) -> str:
    """A stable split from the id's hash: the same task is in the same split on every machine."""
    bucket = int.from_bytes(hashlib.sha256(task_id.encode()).digest()[:8], "big") / 2**64
    return "test" if bucket < test else "dev" if bucket < test + dev else "train"


async def place_files(sandbox: Sandbox, files: Mapping[str, bytes], root: str = WORKSPACE) -> None:
    """Write many files in one request: a tar extracted into `root`."""
    if files:
        await sandbox.put_tar(root, tar_of(files))


def tar_of(files: Mapping[str, bytes | str], mode: int = 0o644) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, data in sorted(files.items()):
            data = data.encode() if isinstance(data, str) else data
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mode = 0o755 if path.endswith(".sh") else mode
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def installed() -> dict[str, EntryPoint]:
    """Entry points of every installed taskpack, by name."""
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def validate(obj: object, where: str) -> Taskpack:
    """Check that `obj` keeps the Taskpack contract; a ConfigError lists everything wrong."""
    problems = [f"no `{attr}`" for attr in REQUIRED if not hasattr(obj, attr)]
    if hasattr(obj, "image") and not isinstance(obj.image, ImageSpec):
        problems.append(f"`image` is a {type(obj.image).__name__}, expected ptrain.sandbox.images.ImageSpec")
    for attr in ASYNC:
        if hasattr(obj, attr) and not inspect.iscoroutinefunction(getattr(obj, attr)):
            problems.append(f"`{attr}` must be an async method")
    if not problems:
        try:
            for tool in obj.tools():
                if not isinstance(tool, Tool) or tool.schema.get("name") != tool.name:
                    problems.append(f"tool {getattr(tool, 'name', tool)!r} has no matching name/schema/__call__")
        except Exception as e:
            problems.append(f"`tools()` raised {type(e).__name__}: {e}")
    if problems:
        raise ConfigError(f"taskpack {where} is broken: {'; '.join(problems)}", fix=f"fix or uninstall {where}")
    return obj


def load(name: str) -> Taskpack:
    eps = installed()
    if name not in eps:
        known = ", ".join(sorted(eps)) or "none"
        raise ConfigError(f"no taskpack named {name!r} is installed (installed: {known})")
    ep = eps[name]
    where = f"{name!r} ({ep.dist.name if ep.dist else ep.value})"
    try:
        obj = ep.load()
    except Exception as e:
        raise ConfigError(f"taskpack {where} failed to import: {type(e).__name__}: {e}") from e
    return validate(obj() if isinstance(obj, type) else obj, where)


def check_task(task: Task) -> list[str]:
    """What is wrong with one task (empty if nothing)."""
    problems = []
    if task.split not in SPLITS:
        problems.append(f"split {task.split!r} is not one of {SPLITS}")
    if task.difficulty not in DIFFICULTIES:
        problems.append(f"difficulty {task.difficulty!r} is not one of {DIFFICULTIES}")
    if not task.instruction.strip():
        problems.append("empty instruction")
    for path in task.files:
        if path.startswith("/") or ".." in path.split("/"):
            problems.append(f"file path {path!r} must be relative and stay in the workspace")
    return problems


def require_tasks(pack: Taskpack, split: str, categories: Iterable[str] = (), difficulties: Iterable[str] = ()) -> None:
    """A split and filters that select no task are an error naming the categories and difficulties there are."""
    categories, difficulties = set(categories), set(difficulties)
    tasks = list(pack.tasks(split))
    chosen = [t for t in tasks if (not categories or t.category in categories)
              and (not difficulties or t.difficulty in difficulties)]  # fmt: skip
    if chosen:
        return
    if not tasks:
        splits = ", ".join(f"{s} ({n})" for s in SPLITS if s != split and (n := sum(1 for _ in pack.tasks(s))))
        raise ConfigError(f"{pack.name} has no {split} tasks", fix=f"splits with tasks: {splits or 'none'}")
    wanted = " and ".join(f"{what} {', '.join(sorted(names))}"
                          for what, names in (("category", categories), ("difficulty", difficulties)) if names)  # fmt: skip
    listed = lambda values: ", ".join(f"{k} ({n})" for k, n in sorted(Counter(values).items()))  # noqa: E731
    raise ConfigError(
        f"no {split} task of {pack.name} has {wanted}: its {split} categories are "
        f"{listed(t.category for t in tasks)}; its difficulties are {listed(t.difficulty for t in tasks)}",
        fix="pick from those with --category and --difficulty (comma-separated), or leave them out",
    )
