"""The verifier: the submitted answer scored against the gold in a fresh sandbox.

The artifact is the text of the answer the model submitted (`answer.txt`; empty when it never
submitted). In a fresh sandbox the answer and the gold enter a directory of their own, and the
image's `fscore.py` (the same code the host imports; see `image/fscore.py`) prints the verdict as
JSON. The gold never enters the episode's sandbox.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

from ptrain.errors import ToolError, VerifierError
from ptrain.sandbox.container import Sandbox
from ptrain.taskpack import Verdict, place_files
from ptrain.tools.submit import SUBMISSION_PATH
from ptrain_financial_docs.tools import FSCORE


async def submitted_answer(sandbox: Sandbox) -> bytes:
    """What the model submitted, as the artifact: the answer's text (b"" when it did not submit)."""
    try:
        submission = json.loads(await sandbox.read_file(SUBMISSION_PATH))
    except (ToolError, ValueError):
        return b""
    return str(submission.get("answer", "")).encode() if isinstance(submission, dict) else b""


async def score_in_sandbox(sandbox: Sandbox, artifact: bytes, gold: Mapping[str, Any], version: str) -> Verdict:
    root = f"/tmp/.verify-{uuid.uuid4().hex}"
    await place_files(sandbox, {"answer.txt": artifact, "gold.json": json.dumps(dict(gold)).encode()}, root=root)
    result = await sandbox.exec(f"python3 -I {FSCORE} {root}/gold.json {root}/answer.txt", timeout_s=30)
    try:
        details = json.loads(result.output.strip().splitlines()[-1])
    except (ValueError, IndexError) as e:
        raise VerifierError(f"fscore.py gave no verdict (exit {result.exit_code}): {result.output[-500:]}") from e
    reward = float(details.pop("reward"))
    return Verdict(reward=reward, passed=bool(details.pop("passed")), details=details, verifier_version=version)
