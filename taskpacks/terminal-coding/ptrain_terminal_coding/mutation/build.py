"""The build behind `--build`: run each project's tests against every mutant and keep the caught ones.

A mutant is kept when at least one test fails; one that survives, hangs or breaks test collection is
dropped. Each run forks from a long-lived test server (SERVER below) rather than starting Python.
The result is written to mutants.json, which is all that loading tasks reads later.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ptrain.errors import ConfigError
from ptrain_terminal_coding.mutation.edits import apply_edit
from ptrain_terminal_coding.mutation.enumeration import (
    PROJECTS_DIR,
    Mutant,
    digest,
    enumerate_mutants,
    project_dirs,
    read_project,
)
from ptrain_terminal_coding.mutation.manifest import MANIFEST, write_manifest
from ptrain_terminal_coding.verifier import parse_junit

# A test server: this interpreter with pytest imported once, reading one request per line and
# forking a child per run, so a run costs a fork instead of an interpreter start. The child runs
# pytest under a CPU-time limit (a looping mutant is stopped the same way however loaded the machine
# is), a wall-clock alarm as backstop, and a 2 GiB address-space limit (a mutant that allocates
# without end fails fast). It answers with the run's exit status, negative for a signal.
SERVER = """
import json, os, resource, signal, sys
import pytest
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            os.chdir(request["root"])
            sys.path.insert(0, request["root"])
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            resource.setrlimit(resource.RLIMIT_AS, (1 << 31, 1 << 31))
            resource.setrlimit(resource.RLIMIT_CPU, (request["cpu_s"], request["cpu_s"]))
            signal.alarm(request["wall_s"])
            code = int(pytest.main(request["args"]))
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    print(os.waitstatus_to_exitcode(status), flush=True)
"""


# Whether a test fails does not depend on these plug-ins or on assertion rewriting; leaving them out
# halves the cost of a run.
UNUSED_PLUGINS = (
    "cacheprovider doctest faulthandler legacypath logging pastebin setuponly setupplan stepwise subtests "
    "threadexception unittest unraisableexception warnings"
)
LEAN = [*(f"-pno:{name}" for name in UNUSED_PLUGINS.split()), "--assert=plain", "--capture=no"]


@dataclass(frozen=True)
class Outcome:
    status: str  # "passed", "failed" (some test failed), "timeout" or "error" (collection broke, ...)
    failing: tuple[str, ...] = ()
    tests: int = 0


class TestServer:
    """One long-lived test server process; `run` tests a project folder (its `tests/`) in a fresh fork."""

    __test__ = False  # not a pytest test class

    def __init__(self) -> None:
        env = {
            **os.environ,
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True
        )

    def run(self, root: Path, timeout_s: float) -> Outcome:
        report = root.parent / f"{root.name}-report.xml"
        report.unlink(missing_ok=True)
        args = [*LEAN, "-q", "-o", "addopts=", f"--junitxml={report}", "tests"]
        request = {
            "root": str(root),
            "args": args,
            "cpu_s": max(1, round(timeout_s)),
            "wall_s": max(10, round(10 * timeout_s)),
        }
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError(f"the test server died (exit status {self.proc.wait()})")
        code = int(answer)
        if code < 0:
            return Outcome("timeout" if -code in (signal.SIGXCPU, signal.SIGALRM, signal.SIGKILL) else "error")
        if code not in (0, 1) or not report.exists():
            return Outcome("error")
        result = parse_junit(report.read_bytes())
        failing = tuple(sorted(name.rsplit("::", 1)[-1] for name in result["failed"]))
        return Outcome("passed" if code == 0 else "failed", failing, result["tests"])

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def build(projects_dir: Path = PROJECTS_DIR, manifest: Path = MANIFEST, jobs: int = 2, timeout_s: float = 3.0) -> dict:
    """Test every mutant, write the manifest of those some test catches, and return it.

    `timeout_s` limits one run of a project's tests in CPU seconds (a clean run takes about 0.1)."""
    started = time.monotonic()
    projects = {p.name: read_project(p) for p in project_dirs(projects_dir)}
    mutants = enumerate_mutants(projects_dir)
    print(f"{len(mutants)} mutants of {len(projects)} projects; testing with {jobs} jobs", file=sys.stderr)
    local, lock, servers, done = threading.local(), threading.Lock(), [], Counter()

    with tempfile.TemporaryDirectory(prefix="ptrain-mutants-") as tmp:

        def worker() -> tuple[TestServer, dict[str, Path]]:
            if not hasattr(local, "server"):
                local.server, local.copies = TestServer(), {}
                with lock:
                    servers.append(local.server)
            return local.server, local.copies

        def workspace(project: str) -> Path:
            copies = worker()[1]
            if project not in copies:
                copies[project] = Path(tmp) / str(threading.get_ident()) / project
                shutil.copytree(
                    projects_dir / project, copies[project], ignore=shutil.ignore_patterns(".*", "__pycache__")
                )
            return copies[project]

        def baseline(project: str) -> Outcome:
            outcome = worker()[0].run(workspace(project), timeout_s)
            if outcome.status != "passed":
                raise ConfigError(
                    f"project {project}: its own tests do not pass ({outcome})", fix="fix the project first"
                )
            return outcome

        def check(mutant: Mutant) -> Outcome:
            root = workspace(mutant.project)
            original = projects[mutant.project][mutant.file].decode()
            (root / mutant.file).write_text(apply_edit(original, mutant.edit))
            try:
                outcome = worker()[0].run(root, timeout_s)
            finally:
                (root / mutant.file).write_text(original)
            with lock:
                done[outcome.status] += 1
                if done.total() % 100 == 0:
                    counts = ", ".join(f"{k} {v}" for k, v in sorted(done.items()))
                    print(
                        f"  {done.total()}/{len(mutants)} in {time.monotonic() - started:.0f} s: {counts}",
                        file=sys.stderr,
                    )
            return outcome

        try:
            with ThreadPoolExecutor(jobs) as pool:
                tests = {
                    project: outcome.tests
                    for project, outcome in zip(projects, pool.map(baseline, projects), strict=True)
                }
                outcomes = list(pool.map(check, mutants))
        finally:
            for server in servers:
                server.close()

    kept = [
        {
            "id": m.id,
            "project": m.project,
            "file": m.file,
            "operator": m.operator,
            "start": m.edit.start,
            "end": m.edit.end,
            "new": m.edit.new,
            "failing": list(o.failing),
        }
        for m, o in zip(mutants, outcomes, strict=True)
        if o.status == "failed" and o.failing
    ]
    data = {
        "format": 1,
        "projects": {name: {"sha256": digest(files), "tests": tests[name]} for name, files in projects.items()},
        "enumerated": dict(Counter(m.operator for m in mutants)),
        "dropped": dict(Counter(o.status for o in outcomes if o.status != "failed")),
        "mutants": kept,
    }
    write_manifest(data, manifest)
    print(
        f"kept {len(kept)} of {len(mutants)} mutants in {time.monotonic() - started:.0f} s -> {manifest}",
        file=sys.stderr,
    )
    return data
