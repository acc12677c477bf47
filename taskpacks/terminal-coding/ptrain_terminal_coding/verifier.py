"""The verifier: hidden pytest tests run against a restored workspace in a fresh sandbox.

The artifact (a tar of the workspace) is restored first; only then do the hidden tests enter, in
a directory of their own outside the workspace whose name the workspace cannot guess. pytest runs
in isolated mode (`python3 -I`: no current directory or PYTHON* variables on the path), the
workspace is appended to `sys.path` (so its modules can't shadow pytest or the standard library),
bytecode is cached outside the workspace (so a stale or planted `.pyc` there is never run) and the verdict is read from pytest's JUnit XML, not from anything printed. Nothing of the episode
survives into the fresh container: no processes, no edited tests.
"""

from __future__ import annotations

import uuid
import xml.etree.ElementTree as ET
from collections.abc import Mapping

from ptrain.errors import ToolError
from ptrain.sandbox.container import Sandbox
from ptrain.taskpack import Verdict, place_files

CONFTEST = """import sys
for _path in {pythonpath!r}:
    if _path not in sys.path:
        sys.path.append(_path)
"""


def parse_junit(xml: bytes) -> dict:
    root = ET.fromstring(xml)
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    cases = [case for suite in suites for case in suite.iter("testcase")]
    failed = [
        f"{case.get('classname', '')}::{case.get('name', '')}"
        for case in cases
        if case.find("failure") is not None or case.find("error") is not None or case.find("skipped") is not None
    ]
    return {"tests": len(cases), "passed": len(cases) - len(failed), "failed": failed}


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
    await sandbox.put_tar(workdir, artifact)
    root = f"/tmp/.verify-{uuid.uuid4().hex}"
    await place_files(sandbox, {"conftest.py": CONFTEST.format(pythonpath=pythonpath).encode()}, root=root)
    await place_files(sandbox, dict(tests), root=f"{root}/tests")
    command = (
        f"cd {root} && python3 -I -X pycache_prefix={root}/pycache -m pytest -q -p no:cacheprovider -o addopts= "
        f"--rootdir={root} "
        f"--junitxml={root}/report.xml tests 2>&1"
    )
    result = await sandbox.exec(command, timeout_s=timeout_s, max_output_bytes=8192)
    details: dict = {"exit_code": result.exit_code, "output": result.output[-4000:]}
    try:
        details.update(parse_junit(await sandbox.read_file(f"{root}/report.xml")))
    except (ToolError, ET.ParseError) as e:  # no report: the tests timed out or could not start
        details.update({"tests": 0, "passed": 0, "failed": [], "error": f"no test report ({e})"})
    if result.timed_out:
        details["error"] = f"hidden tests timed out after {timeout_s:g} s"
    details["fraction"] = details["passed"] / details["tests"] if details["tests"] else 0.0
    passed = details["tests"] > 0 and details["passed"] == details["tests"] and not result.timed_out
    return Verdict(reward=1.0 if passed else 0.0, passed=passed, details=details, verifier_version=version)
