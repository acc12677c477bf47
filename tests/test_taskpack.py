"""Taskpack discovery through entry points, validation when loaded, and taskpack images."""

from __future__ import annotations

import pytest

from ptrain import taskpack
from ptrain.errors import ConfigError
from ptrain.sandbox import Sandbox, images
from ptrain.testing.tinypack import TASKPACK


def install_fake_distribution(tmp_path, monkeypatch, target: str) -> None:
    """Register an entry point the way pip would: a .dist-info directory on sys.path."""
    info = tmp_path / "tinypack-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tinypack\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[ptrain.taskpacks]\ntiny = {target}\n")
    monkeypatch.syspath_prepend(str(tmp_path))


def test_an_installed_taskpack_is_found_and_loaded(tmp_path, monkeypatch):
    install_fake_distribution(tmp_path, monkeypatch, "ptrain.testing.tinypack:TASKPACK")
    assert "tiny" in taskpack.installed()
    assert taskpack.load("tiny") is TASKPACK


def test_a_broken_taskpack_is_an_error_naming_its_package(tmp_path, monkeypatch):
    install_fake_distribution(tmp_path, monkeypatch, "ptrain.testing.tinypack:TinyTaskpack.__doc__")
    with pytest.raises(ConfigError, match=r"taskpack 'tiny' \(tinypack\) is broken: no `name`"):
        taskpack.load("tiny")


def test_a_taskpack_that_fails_to_import_is_an_error_naming_its_package(tmp_path, monkeypatch):
    install_fake_distribution(tmp_path, monkeypatch, "ptrain.testing.no_such_module:TASKPACK")
    with pytest.raises(ConfigError, match=r"'tiny' \(tinypack\) failed to import: ModuleNotFoundError"):
        taskpack.load("tiny")


def test_an_unknown_taskpack_lists_what_is_installed():
    with pytest.raises(ConfigError, match="no taskpack named 'nope'"):
        taskpack.load("nope")


def test_image_tags_follow_the_content(tmp_path):
    context = tmp_path / "ctx"
    context.mkdir()
    (context / "Containerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n")
    spec = images.ImageSpec("x", context)
    first = images.taskpack_image(spec)
    assert images.taskpack_image(spec) == first
    (context / "extra.txt").write_text("changed")
    assert images.taskpack_image(spec) != first


async def test_a_taskpack_image_builds_on_the_base_once(base_image, podman_url):
    image = images.build_taskpack(TASKPACK.image, podman_url)
    assert image.startswith("localhost/ptrain-tiny:")
    assert images.exists(image, podman_url)
    assert images.build_taskpack(TASKPACK.image, podman_url) == image  # found, not rebuilt
    box = await Sandbox.create(image, podman_url)
    try:
        assert (await box.exec("cat /opt/tiny/hello.txt")).output == "hello from the tiny taskpack\n"
    finally:
        await box.close()
