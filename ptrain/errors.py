"""ptrain's typed failures, all under one `PtrainError` that the CLI prints without a traceback.

Infrastructure failures (`SandboxError`, `EngineError`) are told apart from the model's own
(`ToolError`), so an episode that failed because a container died is never trained on as if the
model had failed.
"""

from __future__ import annotations


class PtrainError(Exception):
    """A failure with a message for the user and, where one is known, what to do about it."""

    def __init__(self, message: str, fix: str | None = None):
        super().__init__(message)
        self.fix = fix

    def __str__(self) -> str:
        text = super().__str__()
        return f"{text}\n  fix: {self.fix}" if self.fix else text


class ConfigError(PtrainError):
    """Bad flags, config files or plug-ins."""


class SandboxError(PtrainError):
    """The container, podman or the exec agent failed (infrastructure, not the model)."""


class ToolError(PtrainError):
    """A tool call the model made could not be carried out (bad path, bad arguments)."""


class WorkspaceError(ToolError):
    """The model left a workspace that can't be collected (over `artifact_max_mb`, unreadable, too
    deep): the model's failure, scored 0 and trained on, never retried as infrastructure."""


class VerifierError(PtrainError):
    """A verifier crashed, hung or returned something that is not a verdict."""


class EngineError(PtrainError):
    """The inference engine failed."""
