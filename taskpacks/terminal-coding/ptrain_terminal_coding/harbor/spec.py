"""A Harbor task.toml read: the fields ptrain uses, and a warning for each one it does not.

Used: [verifier] timeout_sec and env; [agent] timeout_sec (carried on the task); [environment]
build_timeout_sec (the image build's limit), cpus, memory_mb and storage_mb (the sandbox's CPU
quota, memory limit and writable workspace), env (the sandbox shell's environment), docker_image
(when there is no Dockerfile); [solution] env (exported before the gold solution runs). Informational
tables ([task], [metadata]) are read for category, difficulty and tags. Everything else, and values
a sandbox can't honour (GPUs, internet, MCP servers), is listed as a warning on the task.

The verifier's timeout is the task's, capped when the test script runs (verify.py) at
PTRAIN_HARBOR_TEST_TIMEOUT_CAP_S (default 270 s); ptrain waits for the verdict that long and 90 s more
(the task's `verify_timeout_s`), so raising the cap raises the wait.
"""

from __future__ import annotations

import os
import re

from ptrain_terminal_coding.harbor.imported import ImportResult

DEFAULT_TEST_TIMEOUT_S = 120.0
DEFAULT_CAP_S = 270.0
CAP_ENV = "PTRAIN_HARBOR_TEST_TIMEOUT_CAP_S"
INFORMATIONAL = {"task", "metadata"}  # read for labels; nothing in them changes how a task runs
USED = {
    "": {"schema_version", "version", "artifacts"},
    "verifier": {"timeout_sec", "env"},
    "agent": {"timeout_sec"},
    "ptrain": {"services"},  # ptrain's own table: services the tests query, started from the agent's state
    "environment": {
        "build_timeout_sec",
        "cpus",
        "memory_mb",
        "storage_mb",
        "memory",
        "storage",
        "env",
        "docker_image",
        "gpus",
        "allow_internet",
        "mcp_servers",
    },  # fmt: skip
    "solution": {"env"},
}


def test_timeout_cap_s() -> float:
    """The most a test script may run (PTRAIN_HARBOR_TEST_TIMEOUT_CAP_S, default 270 s)."""
    return float(os.environ.get(CAP_ENV) or DEFAULT_CAP_S)


def size_mb(value: object) -> int | None:
    """A size in MB from `4096` or Harbor's older strings (`"4G"`, `"512M"`)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return int(value)
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", str(value).lower())
    if not m:
        raise ValueError(f"not a size: {value!r}")
    return int(float(m.group(1)) * {"k": 1 / 1024, "": 1, "m": 1, "g": 1024, "t": 1 << 20}[m.group(2)])


def unsupported(spec: dict) -> list[str]:
    """One line per task.toml field ptrain does not honour, with why."""
    out = []
    for table, value in spec.items():
        if table in INFORMATIONAL:
            continue
        if isinstance(value, dict) and table in USED:
            out += [f"[{table}] {k}" for k in value if k not in USED[table]]
        elif isinstance(value, dict):
            out.append(f"[{table}]")
        elif table not in USED[""]:
            out.append(table)
    env = spec.get("environment", {})
    if float(env.get("gpus") or 0) > 0:
        out.append(f"[environment] gpus = {env['gpus']} (sandboxes have no GPU)")
    if env.get("allow_internet"):
        out.append("[environment] allow_internet = true (sandboxes have no network)")
    if env.get("mcp_servers"):
        out.append("[environment] mcp_servers (no MCP servers run beside a sandbox)")
    if spec.get("artifacts"):
        out.append("artifacts (the artifact is the container's state, or the workdir's tar with --no-root)")
    return out


def read_spec(spec: dict, result: ImportResult) -> dict:
    """What ptrain-import.json keeps of a task.toml: timeouts, resources, environments."""
    verifier, agent, env = spec.get("verifier", {}), spec.get("agent", {}), spec.get("environment", {})
    wanted = float(verifier.get("timeout_sec") or DEFAULT_TEST_TIMEOUT_S)
    if wanted > test_timeout_cap_s():
        result.warnings.append(
            f"verifier timeout {wanted:g} s is capped to {test_timeout_cap_s():g} s when the tests run "
            f"({CAP_ENV}; `ptrain verify` gives a verdict 300 s in all)"
        )
    result.warnings += [f"task.toml {field}: not supported here, ignored" for field in unsupported(spec)]
    resources = {
        "cpus": float(env["cpus"]) if env.get("cpus") else None,
        "memory_mb": size_mb(env.get("memory_mb", env.get("memory"))),
        "workspace_mb": size_mb(env.get("storage_mb", env.get("storage"))),
        "build_timeout_s": float(env["build_timeout_sec"]) if env.get("build_timeout_sec") else None,
    }
    return {
        "timeout_s": wanted,  # capped when it is used, so the cap can change without a re-import
        "agent_timeout_s": float(agent.get("timeout_sec") or 0) or None,
        "env": {k: str(v) for k, v in verifier.get("env", {}).items()},
        "environment_env": {k: str(v) for k, v in env.get("env", {}).items()},
        "solution_env": {k: str(v) for k, v in spec.get("solution", {}).get("env", {}).items()},
        "resources": {k: v for k, v in resources.items() if v is not None},
    }
