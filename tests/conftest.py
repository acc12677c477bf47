"""Shared fixtures: a running podman service and ptrain's base image, built once per session."""

from __future__ import annotations

import pytest

from ptrain.sandbox import images, runtime


@pytest.fixture(scope="session")
def podman_url() -> str:
    return runtime.ensure_service()


@pytest.fixture(scope="session")
def base_image(podman_url: str) -> str:
    return images.build_base(podman_url)
