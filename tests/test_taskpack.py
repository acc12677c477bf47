"""The taskpack contract: discovery through entry points, validation, scaffolding, images, check."""

from __future__ import annotations

import sys

import pytest

from ptrain import taskpack
from ptrain.errors import ConfigError
from ptrain.sandbox import PoolSet, Sandbox, images
from ptrain.scaffold import module_name, scaffold
from ptrain.verify import check_taskpack, select_tasks


def install_fake_distribution(tmp_path, monkeypatch, target: str, name: str = "tiny") -> None:
    """Register an entry point the way pip would: a .dist-info directory on sys.path."""
    info = tmp_path / f"ptrain_{name.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: ptrain-{name}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[ptrain.taskpacks]\n{name} = {target}\n")
    monkeypatch.syspath_prepend(str(tmp_path))


@pytest.fixture
def scaffolded(tmp_path, monkeypatch):
    """`ptrain taskpacks new tiny`, installed the way pip -e would."""
    root = scaffold("tiny", tmp_path / "src")
    monkeypatch.syspath_prepend(str(root))
    install_fake_distribution(tmp_path, monkeypatch, f"{module_name('tiny')}:TASKPACK")
    yield taskpack.load("tiny")
    sys.modules.pop(module_name("tiny"), None)


def test_an_installed_taskpack_is_found_loaded_and_validated(scaffolded):
    assert "tiny" in taskpack.installed()
    assert scaffolded.name == "tiny"
    assert sum(1 for split in taskpack.SPLITS for _ in scaffolded.tasks(split)) == 3


def test_a_broken_taskpack_is_an_error_naming_its_package_and_what_is_wrong(tmp_path, monkeypatch):
    install_fake_distribution(tmp_path, monkeypatch, "ptrain.errors:PtrainError.__doc__")
    with pytest.raises(ConfigError, match=r"taskpack 'tiny' \(ptrain-tiny\) is broken: no `name`; no `version`"):
        taskpack.load("tiny")


def test_a_taskpack_with_sync_methods_is_rejected(scaffolded):
    class Sync:
        name, version, image = "x", "1", scaffolded.image
        tasks, tools, gold = scaffolded.tasks, scaffolded.tools, scaffolded.gold

        def setup(self, task, sandbox): ...
        def artifact(self, task, sandbox): ...
        def verify(self, task, artifact, sandbox): ...

    with pytest.raises(ConfigError, match="`setup` must be an async method"):
        taskpack.validate(Sync(), "'x'")


def test_a_taskpack_that_fails_to_import_is_an_error_naming_its_package(tmp_path, monkeypatch):
    install_fake_distribution(tmp_path, monkeypatch, "ptrain.no_such_module:TASKPACK")
    with pytest.raises(ConfigError, match=r"'tiny' \(ptrain-tiny\) failed to import: ModuleNotFoundError"):
        taskpack.load("tiny")


def test_an_unknown_taskpack_lists_what_is_installed():
    with pytest.raises(ConfigError, match="no taskpack named 'nope'"):
        taskpack.load("nope")


def test_scaffolding_refuses_bad_names_and_existing_directories(tmp_path):
    with pytest.raises(ConfigError, match="lowercase"):
        scaffold("Bad_Name", tmp_path)
    scaffold("ok-name", tmp_path)
    with pytest.raises(ConfigError, match="already exists"):
        scaffold("ok-name", tmp_path)


def test_splits_are_stable_and_spread():
    ids = [f"cat/task-{i}" for i in range(1000)]
    splits = [taskpack.split_of(i) for i in ids]
    assert splits == [taskpack.split_of(i) for i in ids]
    assert 0.1 < splits.count("test") / 1000 < 0.2 and 0.05 < splits.count("dev") / 1000 < 0.15


def test_image_tags_follow_the_content(tmp_path):
    context = tmp_path / "ctx"
    context.mkdir()
    (context / "Containerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n")
    spec = images.ImageSpec("x", context)
    first = images.taskpack_image(spec)
    assert images.taskpack_image(spec) == first
    (context / "extra.txt").write_text("changed")
    assert images.taskpack_image(spec) != first


async def test_a_scaffolded_taskpack_builds_its_image_once_and_passes_check(scaffolded, podman_url):
    image = images.build_taskpack(scaffolded.image, podman_url)
    assert image.startswith("localhost/ptrain-tiny:")
    assert images.build_taskpack(scaffolded.image, podman_url) == image  # found, not rebuilt
    box = await Sandbox.create(image, podman_url)
    await box.close()
    async with PoolSet(size=1) as pools:
        results = await check_taskpack(scaffolded, select_tasks(scaffolded, taskpack.SPLITS), pools)
    assert [(r.gold, r.noop, r.ok) for r in results] == [(1.0, 0.0, True)] * 3
