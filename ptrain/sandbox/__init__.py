"""Isolated podman sandboxes: runtime, images, the in-container exec agent, containers, warm pools."""

from ptrain.sandbox.container import ExecResult, Sandbox, SandboxLimits
from ptrain.sandbox.images import ImageSpec
from ptrain.sandbox.pool import PoolSet, SandboxPool

__all__ = ["ExecResult", "ImageSpec", "PoolSet", "Sandbox", "SandboxLimits", "SandboxPool"]
