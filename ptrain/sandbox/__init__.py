"""Isolated podman sandboxes: runtime, images, the in-container exec agent, containers, warm pools."""

from ptrain.sandbox.container import ExecResult, Sandbox, SandboxLimits
from ptrain.sandbox.pool import SandboxPool

__all__ = ["ExecResult", "Sandbox", "SandboxLimits", "SandboxPool"]
