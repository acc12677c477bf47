"""The verifier: hidden pytest tests run against a restored workspace in a fresh sandbox, sealed.

The artifact (a tar of the workspace) is restored first; only then do the hidden tests enter. The
code under test is hostile: it may try to write its own verdict, patch the harness or outlive the
run. So:

- the harness (tests, conftest, ini) is root's, in a directory of its own outside the workspace:
  the sandbox user that pytest and everything it starts run as can read it but change nothing;
- pytest runs in isolated mode (`python3 -I`: no current directory or PYTHON* variables on the
  path), the workspace is appended to `sys.path` (so its modules can't shadow pytest or the
  standard library), bytecode is cached outside the workspace (so a planted `.pyc` never runs),
  and git runs with hooks and fsmonitor off;
- the report is no file: the conftest sends each test's outcome to fd 3, a pipe only the agent
  reads, which the tests' subprocesses don't inherit; the pytest process makes itself undumpable,
  so they can't ptrace it or open its memory. The agent hands the report back only once every
  process of the sandbox user is dead, so nothing can add to it afterwards;
- the verdict needs three things to agree: the report (exactly one, naming exactly the tests the
  files define, `expected_test_ids`), pytest's exit status, and a must-fail canary test with a
  random name that the harness runs unlogged after the others (it is in no file and changes
  neither the output nor the exit status). A canary that passes, an exit status that contradicts
  the report, or a second report means the harness was tampered with: reward 0, `tampered` says how.

Code that the tests import runs inside pytest and can still lie from there; the canary and the
exit status catch the blunt ways (forcing every outcome to passed), and the hidden tests being a
superset of the visible ones makes guessing them costly. `docs/reliability.md` lists the probes.
"""

from __future__ import annotations

import ast
import json
import re
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping

from ptrain.errors import ToolError
from ptrain.sandbox.container import RunResult, Sandbox
from ptrain.taskpack import Verdict, tar_of

CONFTEST = """import sys
for _path in {pythonpath!r}:
    if _path not in sys.path:
        sys.path.append(_path)
"""

# The seal on a pytest run, as a conftest (written tasks) or a plugin (Harbor imports, harbor/seal.py):
# every outcome to fd 3, and a must-fail canary run unlogged at the end (no output, no exit status).
PLUGIN = '''"""ptrain's seal on this pytest run (see ptrain_terminal_coding/verifier.py)."""
import ctypes, json, os
try:
    os.set_inheritable(3, False)  # the tests' subprocesses never hold the report pipe
except OSError:
    pass
try:  # undumpable: other processes of this user can't ptrace it or open its memory and fds
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
except (OSError, AttributeError):
    pass
_CANARY = {canary!r}
_RANK = {{"passed": 0, "skipped": 1, "failed": 2, "error": 3}}
_outcomes, _root = {{}}, [""]


def pytest_sessionstart(session):
    _root[0] = str(session.config.rootpath)


def _note(nodeid, outcome):
    path, sep, rest = nodeid.partition("::")
    key = os.path.normpath(os.path.join(_root[0], path)) + sep + rest
    if _RANK[outcome] >= _RANK[_outcomes.get(key, "passed")]:
        _outcomes[key] = outcome


def pytest_runtest_logreport(report):
    if hasattr(report, "wasxfail") or report.skipped:
        _note(report.nodeid, "skipped")
    elif report.failed:
        _note(report.nodeid, "failed" if report.when == "call" else "error")
    else:
        _note(report.nodeid, "passed")


def pytest_collectreport(report):
    if report.failed:
        _note(report.nodeid or ".", "error")


def _canary(session):
    import pytest
    from _pytest.runner import runtestprotocol

    def fail():
        assert False, "the canary must fail"

    try:
        item = pytest.Function.from_parent(session, name=_CANARY, callobj=fail)
        reports = runtestprotocol(item, nextitem=None, log=False)  # not logged: no output, no exit status
    except Exception as e:
        return "error: " + type(e).__name__
    return next((r.outcome for r in reports if r.when == "call"), "not run")


def pytest_sessionfinish(session, exitstatus):
    line = json.dumps({{"outcomes": _outcomes, "canary": _canary(session), "exitstatus": int(exitstatus)}})
    try:
        os.write(3, (line + "\\n").encode())
    except OSError:  # a pytest the tests started: it has no report pipe
        pass
'''

INI = "[pytest]\naddopts =\n"
GIT_SAFE = {  # command-line scope: stronger than anything in the workspace's .git/config
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_COUNT": "3",
    "GIT_CONFIG_KEY_0": "core.fsmonitor",
    "GIT_CONFIG_VALUE_0": "false",
    "GIT_CONFIG_KEY_1": "core.hooksPath",
    "GIT_CONFIG_VALUE_1": "/dev/null",
    "GIT_CONFIG_KEY_2": "safe.directory",
    "GIT_CONFIG_VALUE_2": "*",
}
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
PARAMS = re.compile(r"\[.*\]$")


def parse_junit(xml: bytes) -> dict:
    """Counts from a JUnit XML report (the mutation build's own runs; verification reads fd 3)."""
    root = ET.fromstring(xml)
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    cases = [case for suite in suites for case in suite.iter("testcase")]
    failed = [
        f"{case.get('classname', '')}::{case.get('name', '')}"
        for case in cases
        if case.find("failure") is not None or case.find("error") is not None or case.find("skipped") is not None
    ]
    return {"tests": len(cases), "passed": len(cases) - len(failed), "failed": failed}


def is_test_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def expected_test_ids(tests: Mapping[str, bytes], prefix: str = "tests") -> set[str]:
    """The tests the files define, as pytest names them without parameters: module-level `test*`
    functions and `test*` methods of `Test*` classes. A run must report exactly these."""
    ids = set()
    for path, source in tests.items():
        if not is_test_file(path):
            continue
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
                ids.add(f"{prefix}/{path}::{node.name}")
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                ids.update(
                    f"{prefix}/{path}::{node.name}::{item.name}"
                    for item in node.body
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name.startswith("test")
                )
    return ids


def judge(run: RunResult, expected: Iterable[str], tests_root: str, timeout_s: float) -> tuple[bool, dict]:
    """Passed, and the details, from a sealed run (pure: tested without a sandbox). The report names
    tests by absolute path; `tests_root` is where the tests were, `expected` their ids as `tests/...`."""
    details: dict = {"exit_code": run.exit_code, "output": run.output[-4000:]}
    expected = set(expected)
    report, outcomes = None, {}
    try:
        lines = run.report.decode().splitlines() if run.report else []
        if len(lines) > 1 or (run.report and not run.report.endswith(b"\n")):
            raise ValueError(f"{len(lines)} lines where the harness writes one")
        if lines:
            report = json.loads(lines[0])
            outcomes = {f"tests/{k[len(tests_root) + 1:]}" if k.startswith(tests_root + "/") else k: o
                        for k, o in dict(report["outcomes"]).items()}  # fmt: skip
    except (ValueError, TypeError, KeyError, AttributeError, UnicodeDecodeError) as e:
        report, outcomes = None, {}
        details["tampered"] = f"the report is not one report from the harness ({type(e).__name__}: {e})"
    by_test: dict[str, list[str]] = {}
    for nodeid, outcome in outcomes.items():
        by_test.setdefault(PARAMS.sub("", nodeid), []).append(outcome)
    good = sorted(t for t in expected if by_test.get(t) and all(o == "passed" for o in by_test[t]))
    details.update(
        tests=len(expected),
        passed=len(good),
        failed=sorted(expected - set(good)),
        fraction=len(good) / len(expected) if expected else 0.0,
    )
    unexpected = sorted(t for t in set(by_test) - expected if t.startswith("tests/") and "::" in t)
    if unexpected:
        details["unexpected"] = unexpected[:20]
    if run.timed_out:
        details["error"] = f"hidden tests timed out after {timeout_s:g} s"
    elif report is None and "tampered" not in details:
        details["error"] = "no test report: pytest did not finish (or the code under test closed its report pipe)"
    elif report is not None:
        if report.get("canary") != "failed":
            details["tampered"] = f"the must-fail canary test was {report.get('canary') or 'not run'}"
        elif report.get("exitstatus") != run.exit_code:
            details["tampered"] = f"pytest exited {run.exit_code} but its report says {report.get('exitstatus')}"
    all_good = not expected - set(good) and not unexpected and bool(expected)
    if all_good and not {"tampered", "error"} & set(details) and run.exit_code != 0:
        details["error"] = f"every test passed but pytest exited {run.exit_code}"
    return all_good and not {"tampered", "error"} & set(details), details


async def run_hidden_tests(
    sandbox: Sandbox,
    artifact: bytes,
    tests: Mapping[str, bytes],
    *,
    pythonpath: list[str],
    timeout_s: float,
    version: str,
    workdir: str = "/workspace",
) -> Verdict:
    try:
        await sandbox.put_tar(workdir, artifact)
    except ToolError as e:  # the model's workspace, which it made unrestorable: its failure
        return Verdict(0.0, False, {"error": f"the workspace could not be restored: {e}"}, version)
    key = uuid.uuid4().hex
    root, canary = f"/tmp/.verify-{key}", f"test_{key[:12]}"
    harness = {
        "conftest.py": CONFTEST.format(pythonpath=pythonpath) + PLUGIN.format(canary=canary),
        "pytest.ini": INI,
        **{f"tests/{path}": data for path, data in tests.items()},
    }
    await sandbox.put_tar(root, tar_of(harness), as_root=True)
    argv = ["python3", "-I", "-X", f"pycache_prefix=/tmp/.pycache-{key}", "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "-c", f"{root}/pytest.ini", f"--rootdir={root}", f"{root}/tests"]  # fmt: skip
    env = {"PATH": PATH, "HOME": "/home/agent", "LANG": "C.UTF-8", "TERM": "dumb", "PYTHONUNBUFFERED": "1", **GIT_SAFE}
    run = await sandbox.run(argv, env, cwd=root, timeout_s=timeout_s, max_output_bytes=8192)
    passed, details = judge(run, expected_test_ids(tests), f"{root}/tests", timeout_s)
    return Verdict(reward=1.0 if passed else 0.0, passed=passed, details=details, verifier_version=version)
