"""Shared fixtures: a running podman service and ptrain's base image, built once per session."""

from __future__ import annotations

import os

import pytest

from ptrain.sandbox import images, runtime


@pytest.fixture(scope="session")
def podman_url() -> str:
    return runtime.ensure_service()


@pytest.fixture(scope="session")
def base_image(podman_url: str) -> str:
    return images.build_base(podman_url)


@pytest.fixture(scope="session", autouse=True)
def no_user_imports(tmp_path_factory):
    """Tests see only the tasks in the repository, not what this machine's user imported."""
    os.environ["PTRAIN_IMPORT_DIR"] = str(tmp_path_factory.mktemp("imported"))


@pytest.fixture(scope="session")
def model_path():
    """The default model (SmolLM2-135M-Instruct) as a transformers checkpoint, converted once if need be."""
    from ptrain.engine.models import DEFAULT_MODEL, resolve_model

    return resolve_model(DEFAULT_MODEL)


@pytest.fixture(scope="session")
def tokenizer(model_path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_path)
