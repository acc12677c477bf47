"""The seal on an imported task's pytest run: every outcome to a private pipe, a hidden canary, and
the check that the reward the test script wrote agrees with them.

A Harbor test script decides its own reward (it writes logs/verifier/reward.txt or reward.json), and
the code under test runs as the same user as the script, so a reward file alone can be forged by
that code. When the script runs pytest (Terminal-Bench's parser, or the converted `python3 -P -m
pytest`), ptrain's plugin (`verifier.PLUGIN`, root-owned, loaded through PYTEST_PLUGINS) rides along in that
pytest: it sends each test's outcome to fd 3 (the `Sandbox.run` report pipe, read only once every
process is dead) and, at the end of the session, runs a must-fail canary test without logging it,
so the script's output, exit status and JUnit report are what they would be without ptrain. A
hookwrapper or monkeypatch that forces outcomes to passed makes the canary pass too.

`agree()` then holds the reward to the report: a reward of 1 needs every test of the files pytest
ran from the tests directory reported and passed, a partial reward at least one passed test, and
any reward a report with a failing canary; otherwise the reward is 0 and `tampered` says why.

Not closed: the code under test runs as the same user as the script and its pytest, and inherits
TEST_DIR, so it can still write logs/verifier; code written against this harness could kill pytest
and write a report of its own to the script's fd 3 (through /proc). A test script that runs no
pytest is held to its reward file alone.
"""

from __future__ import annotations

import json
import re

from ptrain_terminal_coding.verifier import PARAMS, expected_test_ids

MODULE = "ptrain_harbor_seal"
RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}  # merged over sessions: the worst counts
PYTEST = re.compile(r"(^|[\s;&|(`])(python3?\s+(-\S+\s+)*-m\s+)?pytest(\s|$)", re.MULTILINE)


def runs_pytest(meta: dict) -> bool:
    """Whether the converted test script runs pytest (Terminal-Bench's parser says so, or its code does)."""
    script = meta["tests"].get(meta["test_script"], b"").decode(errors="replace")
    code = "\n".join(line.split("#", 1)[0] for line in script.splitlines())
    return meta.get("parser") == "pytest" or bool(PYTEST.search(code))


def parse_reports(report: bytes, tests_root: str) -> tuple[list[dict], dict[str, str], str]:
    """The reports (one JSON line per pytest session), the outcomes of tests under `tests_root`
    as `tests/<file>::<test>`, and why the reports are not the harness's ("" when they are)."""
    reports, outcomes = [], {}
    if report and not report.endswith(b"\n"):
        return [], {}, "the pytest report pipe holds something the harness did not write"
    for line in report.splitlines():
        try:
            one = json.loads(line)
            if not isinstance(one.get("outcomes"), dict) or not isinstance(one.get("canary"), str):
                raise ValueError("not a report")
        except (ValueError, AttributeError, UnicodeDecodeError) as e:
            return [], {}, f"the pytest report pipe holds something the harness did not write ({e})"
        reports.append(one)
        for key, outcome in one["outcomes"].items():
            if str(key).startswith(tests_root + "/"):
                key = "tests/" + key[len(tests_root) + 1 :]
                if RANK.get(str(outcome), 3) >= RANK.get(outcomes.get(key, "passed"), 3):
                    outcomes[key] = str(outcome)
    return reports, outcomes, ""


def agree(reward: float, report: bytes, tests_root: str, tests: dict[str, bytes], details: dict) -> float:
    """The reward if the sealed pytest report backs it, else 0 with `tampered` (or, when the reward is
    the Terminal-Bench exit code, a `reason`: `pytest ... || true` is no pass) in details."""
    reports, outcomes, bad = parse_reports(report, tests_root)
    passed = sorted(k for k, o in outcomes.items() if o == "passed")
    failing = sorted(k for k, o in outcomes.items() if o != "passed")
    details.update(pytest_sessions=len(reports), tests_passed=len(passed), tests_not_passed=failing[:20])
    canaries = [r["canary"] for r in reports]
    ran = {key.split("::", 1)[0] for key in outcomes}
    defined = expected_test_ids({path: data for path, data in tests.items() if f"tests/{path}" in ran})
    missing = sorted(defined - {PARAMS.sub("", key) for key in outcomes})
    if missing:
        details["tests_not_run"] = missing[:20]
    if bad:
        details["tampered"] = bad
    elif any(c != "failed" for c in canaries):
        details["tampered"] = f"the must-fail canary test was {next(c for c in canaries if c != 'failed')}"
    elif reward > 0 and not outcomes:
        details["tampered"] = f"a reward of {reward:g} with no sealed pytest report of the task's tests"
    elif reward >= 1 and (failing or missing):
        why = f"{len(failing)} tests not passed {failing[:5]}" if failing else f"tests not run {missing[:5]}"
        if str(details.get("reward_from", "")).startswith("exit code"):
            details["reward_from"] += " and the sealed pytest report"
            details["reason"] = f"the test script exited 0 but pytest reported {why}"
            return 0.0
        details["tampered"] = f"a reward of 1 though pytest reported {why}"
    elif reward > 0 and not passed:
        details["tampered"] = f"a reward of {reward:g} though no test passed"
    return 0.0 if "tampered" in details else reward
