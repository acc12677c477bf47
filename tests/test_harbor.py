"""Harbor / Terminal-Bench import: both layouts convert; in real sandboxes gold scores 1, a no-op 0, and
the reward-file attacks 0 (the harness is out of reach, and the reward must agree with sealed pytest)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ptrain_terminal_coding import TASKPACK
from ptrain_terminal_coding.harbor import import_tasks, load_imported, substitutes
from ptrain_terminal_coding.harbor.bases import MAPS, map_base
from ptrain_terminal_coding.harbor.dockerfile import convert_dockerfile
from ptrain_terminal_coding.harbor.imported import ImportResult
from ptrain_terminal_coding.harbor.offline import needs_of
from ptrain_terminal_coding.harbor.seal import agree
from ptrain_terminal_coding.harbor.verify import harbor_reward
from ptrain_terminal_coding.taskpack import TerminalCoding

from ptrain import taskpack
from ptrain.errors import ConfigError, SandboxError
from ptrain.probes import PY_PAYLOADS
from ptrain.sandbox import PoolSet, images
from ptrain.taskpack import ToolCall
from ptrain.verify import check_one, replay, verify_artifact

FIXTURES = Path(__file__).parent / "fixtures"
PTRAIN = str(Path(sys.executable).parent / "ptrain")
NAMES = ["count-words", "fix-server-config", "reverse-lines", "sum-column"]


def code(text: str) -> str:
    """A script without its comments (converted lines keep the original as a `# ptrain: was` comment)."""
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("imported")
    results = import_tasks(FIXTURES / "harbor", dest) + import_tasks(FIXTURES / "terminal-bench", dest)
    assert [(r.name, r.error) for r in results if not r.ok] == []
    assert sorted(r.name for r in results) == NAMES
    return dest


@pytest.fixture(scope="module")
async def pools(imported, podman_url, base_image):
    images.build_taskpack(TASKPACK.image, podman_url)  # imported images reuse its layers: seconds each
    async with PoolSet(size=1, max_active=8, urls=[podman_url]) as pools:
        yield pools


def test_both_layouts_convert_with_from_mapped_and_test_time_installs_replaced(imported):
    containerfile = (imported / "count-words" / "environment" / "Containerfile").read_text()
    froms = [line for line in containerfile.splitlines() if line.startswith("FROM")]
    assert froms == ["FROM ${BASE_IMAGE}"] and "\nARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n" in containerfile
    assert "COPY notes.txt /app/notes.txt" in containerfile and "CMD" not in code(containerfile)
    assert containerfile.rstrip().endswith("chown -R 1000:1000 /app\nWORKDIR /app\nUSER 1000:1000")
    assert "ENTRYPOINT" not in code((imported / "fix-server-config" / "environment" / "Containerfile").read_text())

    for script in ("count-words/tests/test.sh", "fix-server-config/tests/test.sh", "sum-column/tests/run-tests.sh"):
        text = code((imported / script).read_text())
        assert not re.search(r"\b(uvx|uv|curl|apt-get|source)\b|--ctrf", text), script
        assert "python3 -P -m pytest" in text and not re.search(r"(?<![\w/])/(tests|logs)/", text), script
    tb = code((imported / "reverse-lines" / "tests" / "run-tests.sh").read_text())
    assert "pip" not in tb and "pytest $TEST_DIR/test_outputs.py -rA" in tb
    moved = (imported / "sum-column" / "tests" / "test_outputs.py").read_text()
    assert 'Path("/tmp/ptrain-verify/tests/expected_total.txt")' in moved  # /tests in a test file moves too
    assert not (imported / "reverse-lines" / "environment" / "tests").exists()  # tests never enter the image


def test_imported_tasks_carry_their_image_workdir_split_and_verifier(imported, monkeypatch):
    tasks = {t.id: t for t in load_imported(imported)}
    assert sorted(tasks) == [f"imported/{name}" for name in NAMES]
    config = tasks["imported/fix-server-config"]
    assert (config.category, config.difficulty) == ("system-administration", "medium")
    assert {t.split for t in tasks.values()} == {"test"}  # an imported benchmark is held out
    assert config.image.name == "imported-fix-server-config" and config.image.workdir == "/srv/web"
    assert config.metadata["verifier"] == "harbor" and config.metadata["env"] == {"EXPECTED_PORT": "8080"}
    assert config.setup == 'export APP_ENV="staging"'  # the sandbox shell starts without the image's ENV
    assert tasks["imported/sum-column"].image.workdir == "/data"
    assert all(taskpack.check_task(t) == [] for t in tasks.values())
    monkeypatch.setenv("PTRAIN_IMPORT_DIR", str(imported))
    assert set(tasks) <= {t.id for t in TerminalCoding().all_tasks}


def test_a_task_that_cannot_be_converted_is_named_and_the_others_still_import(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(FIXTURES / "harbor", src)
    shutil.copytree(src / "count-words", src / "on-alpine")
    (src / "on-alpine" / "environment" / "Dockerfile").write_text("FROM alpine:3.20\nRUN apk add bash\n")
    shutil.copytree(src / "count-words", src / "no-tests")
    (src / "no-tests" / "tests" / "test.sh").unlink()
    shutil.copytree(src / "count-words", src / "pip-in-build")
    (src / "pip-in-build" / "environment" / "Dockerfile").write_text("FROM python:3.12\nRUN pip install six==1.17.0\n")

    results = {r.name: r for r in import_tasks(src, tmp_path / "dest")}
    alpine = results["on-alpine"].error
    assert re.match(r"task 'on-alpine' \(.*/on-alpine\): base image 'alpine:3.20' can't be mapped", alpine)
    assert "no tests/test.sh" in results["no-tests"].error
    assert results["pip-in-build"].ok and "six==1.17.0" in results["pip-in-build"].pins  # from a wheel, offline
    assert "FROM python:3.12 asks for Python 3.12" in " ".join(results["pip-in-build"].warnings)
    assert results["count-words"].ok and results["fix-server-config"].ok
    names = sorted(p.name for p in (tmp_path / "dest").iterdir())
    assert names == ["count-words", "fix-server-config", "pip-in-build"]


def test_python_packages_come_from_pinned_wheels_and_test_time_requirements_are_in_the_image(imported):
    meta = json.loads((imported / "count-words" / "ptrain-import.json").read_text())
    assert {"pytest==8.4.1", "pytest-json-ctrf==0.3.5", "uv==0.9.5"} <= set(meta["pins"])  # build, test, uv
    wheels = imported / "count-words" / "environment" / "ptrain-wheels"
    assert (wheels / "pytest-8.4.1-py3-none-any.whl").is_file() and (wheels / "pins.txt").read_text().split() == meta[
        "pins"
    ]
    containerfile = (imported / "count-words" / "environment" / "Containerfile").read_text()
    assert "ARG PIP_NO_INDEX=1" in containerfile and "RUN pip install --no-cache-dir pytest==8.4.1" in containerfile
    assert "pytest==8.4.1 pytest-json-ctrf==0.3.5" in containerfile  # what test.sh's uvx asked for, installed
    assert 'cp "$(command -v uv)" "$(command -v uvx)" /root/.local/bin/' in containerfile  # where install.sh puts uv
    assert any("ask for Python 3.13" in w for w in meta["warnings"])
    config = json.loads((imported / "fix-server-config" / "ptrain-import.json").read_text())
    assert "iniconfig==2.1.0" in config["pins"]  # installed by a setup script the Dockerfile runs
    tb = json.loads((imported / "sum-column" / "ptrain-import.json").read_text())
    assert "pytest==8.4.1" in tb["pins"]  # `uv add pytest==8.4.1` in run-tests.sh


def test_needs_of_reads_installs_and_downloads_from_shell_text():
    needs = needs_of(
        "apt-get install -y curl git && curl -LsSf https://astral.sh/uv/0.9.7/install.sh | sh\n"
        "if uvx -p 3.13 -w pytest==8.4.1 --with 'numpy<2' pytest /tests -rA; then echo ok; fi\n"
        "sudo pip3 install --break-system-packages requests==2.32.3 2>&1 || pip install git+https://x.test/y\n"
        "git clone https://x.test/repo.git && wget -q http://x.test/a.iso -O a.iso\n"
    )
    assert needs.requirements == ["uv==0.9.7", "pytest==8.4.1", "numpy<2", "requests==2.32.3"]
    assert needs.python == ["3.13"]
    assert [d.split("`")[1].split()[0] for d in needs.downloads] == ["pip", "git", "wget"]
    assert needs_of("pip install --no-index --find-links /w six").requirements == []


def test_downloads_that_cannot_work_offline_are_refused_at_import_and_unsupported_fields_warned(tmp_path):
    src = tmp_path / "src"
    dockerfiles = {
        "git-clone": "FROM debian:bookworm\nRUN apt-get update && apt-get install -y git && git clone https://x.test/r\n",
        "iso-in-script": "FROM ubuntu:24.04\nCOPY setup.sh /tmp/setup.sh\nRUN bash /tmp/setup.sh\n",
        "add-url": "FROM debian:bookworm\nADD https://x.test/data.tar.gz /data/\n",
        "no-wheel": "FROM python:3.11\nRUN pip install ptrain-no-such-package-here==0.0.1\n",
    }
    for name, dockerfile in dockerfiles.items():
        shutil.copytree(FIXTURES / "harbor" / "count-words", src / name)
        (src / name / "environment" / "Dockerfile").write_text(dockerfile)
    (src / "iso-in-script" / "environment" / "setup.sh").write_text(
        "set -e\nwget -q https://x.test/os.iso -O /os.iso\n"
    )
    shutil.copytree(FIXTURES / "harbor" / "count-words", src / "odd-toml")
    toml = src / "odd-toml" / "task.toml"
    toml.write_text(toml.read_text() + "gpus = 1\nallow_internet = true\nprivileged = true\n\n[hooks]\npre = 'x'\n")

    results = {r.name: r for r in import_tasks(src, tmp_path / "dest")}
    assert "git clone https://x.test/r` needs a git server" in results["git-clone"].error
    assert (
        "setup.sh (run by `RUN bash /tmp/setup.sh`): `wget -q https://x.test/os.iso" in results["iso-in-script"].error
    )
    assert "`ADD https://x.test/data.tar.gz /data/` downloads" in results["add-url"].error
    assert "no wheels for" in results["no-wheel"].error and "ptrain-no-such-package-here" in results["no-wheel"].error
    warnings = " | ".join(results["odd-toml"].warnings)
    for field in (
        "[environment] privileged",
        "[hooks]",
        "[environment] gpus = 1 (sandboxes",
        "[environment] allow_internet",
    ):
        assert f"task.toml {field}" in warnings, field


def test_a_go_base_is_the_lowest_debian_go_at_or_above_the_one_asked_from_its_suite_pinned():
    exact = map_base("public.ecr.aws/docker/library/golang:1.26.2-bookworm")
    assert exact.packages == ["golang-1.26-go/trixie-backports", "golang-1.26-src/trixie-backports"]
    assert exact.warnings == []  # 1.26.2 asks for 1.26: no other version
    assert exact.env == {"GOPATH": "/go", "GOCACHE": "/tmp/go-build", "PATH": "/go/bin:/usr/lib/go-1.26/bin:$PATH"}
    assert map_base("golang:1.22-bookworm").packages[0] == "golang-1.22-go/bookworm-backports"
    assert map_base("golang:1.24").packages[0] == "golang-1.24-go/trixie"
    older = map_base("golang:1.20.3-alpine")
    assert older.packages[0] == "golang-1.21-go/bookworm-backports"
    assert "Go 1.20.3 is Debian's Go 1.21 (from bookworm-backports" in older.warnings[0]
    with pytest.raises(ConfigError, match="Go 1.99 is newer than any Debian has"):
        map_base("golang:1.99")
    steps = "\n".join(map_base("golang:1.24").steps())
    assert "echo 'deb http://deb.debian.org/debian trixie main' > /etc/apt/sources.list.d/ptrain-trixie.list" in steps
    assert "Pin: release n=trixie\\nPin-Priority: 50" in steps  # nothing unnamed is ever taken from trixie
    assert "apt-get install -y --no-install-recommends golang-1.24-go/trixie golang-1.24-src/trixie" in steps
    assert "ln -sfn /usr/lib/go-1.24 /usr/local/go" in steps and "chmod -R 1777 /go" in steps


def test_an_ubuntu_base_that_installs_golang_go_gets_its_release_s_go_from_the_table():
    noble = map_base("ubuntu:24.04", "RUN apt-get update && apt-get install -y --no-install-recommends golang-go\n")
    assert noble.packages == ["golang-1.22-go/bookworm-backports", "golang-1.22-src/bookworm-backports"]
    assert noble.env == {"GOCACHE": "/tmp/go-build", "PATH": "/usr/lib/go-1.22/bin:$PATH"}
    assert map_base("ubuntu:noble", "RUN apt-get install golang-go").packages == noble.packages
    tbench = map_base("ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250620", "RUN apt-get install golang-go")
    assert tbench.packages == noble.packages  # Terminal-Bench 1's own images name the release in the image
    assert map_base("ubuntu:24.04", "RUN apt-get install -y python3").steps() == []  # no Go asked for
    assert map_base("ubuntu:22.04", "RUN apt-get install -y golang-go").steps() == []  # jammy's 1.18 < bookworm's 1.19


def test_jdk_gcc_and_node_bases_map_onto_debian_packages_and_dotnet_is_refused():
    jdk = map_base("eclipse-temurin:17.0.12_7-jdk-jammy")
    assert jdk.packages == ["openjdk-17-jdk-headless"] and jdk.warnings == []
    assert jdk.env == {"JAVA_HOME": "/opt/java/openjdk", "PATH": "/opt/java/openjdk/bin:$PATH"}
    assert "Java 11 is Debian's OpenJDK 17" in map_base("eclipse-temurin:11-jdk").warnings[0]
    with pytest.raises(ConfigError, match="asks for Java 21; bookworm has only OpenJDK 17"):
        map_base("eclipse-temurin:21-jdk")
    assert "GCC 13.3.0 is bookworm's gcc/g++ 12" in map_base("gcc:13.3.0-bookworm").warnings[0]
    node = map_base("public.ecr.aws/docker/library/node:20.18.1-bookworm")
    assert node.packages == ["nodejs", "npm"] and "Node 20.18.1 is bookworm's nodejs 18" in node.warnings[0]
    for image in ("mcr.microsoft.com/dotnet/sdk:8.0.405", "alpine:3.20"):
        with pytest.raises(ConfigError, match=f"base image '{re.escape(image)}' can't be mapped: {MAPS}"):
            map_base(image)


def test_a_go_task_imports_with_the_golang_image_s_environment_before_its_own(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(FIXTURES / "harbor" / "count-words", src / "on-go")
    (src / "on-go" / "environment" / "Dockerfile").write_text(
        "FROM golang:1.22.7-bookworm\nENV GOTOOLCHAIN=local\nENV PATH=/root/.local/bin:${PATH}\nWORKDIR /app\n"
    )
    [result] = import_tasks(src, tmp_path / "dest")
    assert result.ok, result.error
    meta = json.loads((tmp_path / "dest" / "on-go" / "ptrain-import.json").read_text())
    assert meta["image_env"]["PATH"] == "/root/.local/bin:/go/bin:/usr/lib/go-1.22/bin:$PATH"  # as Docker expands it
    assert meta["image_env"]["GOTOOLCHAIN"] == "local" and meta["image_env"]["GOPATH"] == "/go"
    containerfile = (tmp_path / "dest" / "on-go" / "environment" / "Containerfile").read_text()
    assert containerfile.index("golang-1.22-go/bookworm-backports") < containerfile.index("ENV GOTOOLCHAIN=local")


KOTLIN_RUN = (
    "curl -fsSL https://github.com/JetBrains/kotlin/releases/download/v${KOTLIN_VERSION}/"
    "kotlin-compiler-${KOTLIN_VERSION}.zip -o /tmp/kotlinc.zip && unzip -q /tmp/kotlinc.zip -d /opt && rm /tmp/kotlinc.zip"
)


def convert(dockerfile: str, context: Path) -> tuple[str, ImportResult]:
    context.mkdir(parents=True, exist_ok=True)
    result = ImportResult("t", "harbor", context)
    return convert_dockerfile(dockerfile, context, result), result


def test_jetbrains_kotlin_compiler_zip_is_found_with_its_version_from_env_and_arg():
    found = substitutes.find(KOTLIN_RUN, {"KOTLIN_VERSION": "1.9.22"})
    assert (found.substitute.package, found.version, found.dest, found.rest) == ("kotlin-compiler", "1.9.22",
                                                                                 "/opt/kotlinc", "")  # fmt: skip
    assert found.url == "https://github.com/JetBrains/kotlin/releases/download/v1.9.22/kotlin-compiler-1.9.22.zip"
    fallback = substitutes.find(KOTLIN_RUN + ' || echo "skipped (offline)"', {"KOTLIN_VERSION": "2.0.0"})
    assert fallback.version == "2.0.0" and fallback.rest == ""  # the copy succeeds: its fallback never runs
    more = substitutes.find(f"apt-get install -y unzip && {KOTLIN_RUN.replace('/opt', '/usr/local/')} && kotlinc -version", {"KOTLIN_VERSION": "1.9.22"})  # fmt: skip
    assert more.dest == "/usr/local/kotlinc" and more.rest == "apt-get install -y unzip && kotlinc -version"
    wget = "wget -q -O k.zip https://github.com/JetBrains/kotlin/releases/download/v1.9.0/kotlin-compiler-1.9.0.zip"
    assert substitutes.find(f"{wget} && unzip k.zip -d /opt", {}).version == "1.9.0"
    assert substitutes.find(KOTLIN_RUN, {}) is None  # the version is unknown: still a refused download
    assert (
        substitutes.find(KOTLIN_RUN.replace("unzip -q /tmp/kotlinc.zip -d /opt", "true"), {"KOTLIN_VERSION": "1"})
        is None
    )
    assert substitutes.find("curl -o a.zip https://x.test/a.zip && unzip a.zip -d /opt", {}) is None


def test_the_kotlin_download_becomes_a_copy_of_npm_s_package_executables_kept(tmp_path, monkeypatch):
    package = tmp_path / "npm" / "package"
    (package / "bin").mkdir(parents=True)
    (package / "lib").mkdir()
    (package / "bin" / "kotlinc").write_text("#!/bin/sh\necho kotlinc\n")
    (package / "bin" / "kotlinc").chmod(0o755)
    (package / "lib" / "kotlin-stdlib.jar").write_text("jar")
    subprocess.run(["tar", "czf", tmp_path / "npm" / "kotlin-compiler-1.9.22.tgz", "-C", tmp_path / "npm", "package"],
                   check=True)  # fmt: skip
    monkeypatch.setenv("PTRAIN_HARBOR_NPM", str(tmp_path / "npm"))  # what `npm pack kotlin-compiler@1.9.22` gives
    monkeypatch.setenv("PTRAIN_HOME", str(tmp_path / "home"))
    dockerfile = f"FROM eclipse-temurin:17.0.12_7-jdk-jammy\nARG KOTLIN_VERSION=1.9.22\nRUN {KOTLIN_RUN} \\\n && kotlinc -version\n"
    containerfile, result = convert(dockerfile, tmp_path / "ctx")
    copied = tmp_path / "ctx" / "ptrain-downloads" / "kotlin-compiler-1.9.22"
    assert (
        os.access(copied / "bin" / "kotlinc", os.X_OK) and (copied / "lib" / "kotlin-stdlib.jar").read_text() == "jar"
    )
    assert (tmp_path / "home" / "npm" / "kotlin-compiler-1.9.22" / "bin" / "kotlinc").is_file()  # cached
    assert "COPY ptrain-downloads/kotlin-compiler-1.9.22/ /opt/kotlinc/\nRUN kotlinc -version\n" in containerfile
    assert "# ptrain: was `RUN curl -fsSL https://github.com/JetBrains" in containerfile
    assert "github.com" not in code(containerfile)
    assert any("is npm's kotlin-compiler@1.9.22" in n for n in result.notes)


def test_a_heredoc_run_becomes_a_script_in_the_context_that_the_shell_runs_with_the_same_expansion(tmp_path):
    dockerfile = (
        "FROM debian:bookworm\n"
        "RUN python3 - <<'PY'\nimport os\nprint('$HOME')\nPY\n"
        "RUN cat > /tmp/out/quoted <<'EOF'\n$GREETING there\nEOF\n"
        "RUN cat > /tmp/out/unquoted <<EOF && echo done\n$GREETING there\nEOF\n"
        'SHELL ["/bin/bash", "-o", "pipefail", "-c"]\n'
        'RUN <<-EOF\n\techo "$GREETING" > /tmp/out/alone\nEOF\n'
        "RUN <<EOF\n#!/usr/bin/env python3\nprint(1)\nEOF\n"
    )
    containerfile, result = convert(dockerfile, tmp_path / "ctx")
    assert "print(" not in code(containerfile) and "GREETING" not in code(containerfile)
    runs = [line for line in containerfile.splitlines() if "/opt/ptrain/heredocs/" in line and line.startswith("RUN")]
    assert runs == ["RUN /bin/sh /opt/ptrain/heredocs/1.sh", "RUN /bin/sh /opt/ptrain/heredocs/2.sh",
                    "RUN /bin/sh /opt/ptrain/heredocs/3.sh", "RUN /bin/bash -o pipefail /opt/ptrain/heredocs/4.sh",
                    "RUN /opt/ptrain/heredocs/5.sh"]  # fmt: skip
    assert "COPY ptrain-heredocs/1.sh /opt/ptrain/heredocs/1.sh" in containerfile
    scripts = tmp_path / "ctx" / "ptrain-heredocs"
    assert (scripts / "1.sh").read_text() == "python3 - <<'PY'\nimport os\nprint('$HOME')\nPY\n"
    assert (scripts / "5.sh").read_text() == "#!/usr/bin/env python3\nprint(1)\n" and os.access(
        scripts / "5.sh", os.X_OK
    )
    assert sum("heredoc" in n for n in result.notes) == 5
    out = tmp_path / "out"
    out.mkdir()
    for n in (2, 3, 4):  # the shell reads them as the build would: quoted literal, unquoted expanded
        text = (scripts / f"{n}.sh").read_text().replace("/tmp/out", str(out))
        done = subprocess.run(["bash", "-c", text], env={"GREETING": "hi", "PATH": os.environ["PATH"]},
                              capture_output=True, text=True)  # fmt: skip
        assert done.returncode == 0, done.stderr
    assert (out / "quoted").read_text() == "$GREETING there\n" and (out / "unquoted").read_text() == "hi there\n"
    assert (out / "alone").read_text() == "hi\n"  # `<<-` strips the tab


def test_exact_apt_pins_are_dropped_with_a_warning_naming_them(tmp_path):
    dockerfile = (
        "FROM debian:bookworm\nRUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y \\\n"
        "        git=1:2.39.5-0+deb12u2 \\\n        libc6:amd64=2.36-9+deb12u4 curl \\\n"
        "    && echo keep=1.0 > /tmp/x\nRUN apt-get install -y python3\n"
    )
    containerfile, result = convert(dockerfile, tmp_path / "ctx")
    body = code(containerfile)
    assert "        git \\\n        libc6:amd64 curl \\\n    && echo keep=1.0 > /tmp/x" in body
    assert "deb12u" not in body and "DEBIAN_FRONTEND=noninteractive apt-get install -y" in body
    assert (
        "# ptrain: was `RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y git=1:2.39.5"
        in containerfile
    )
    [warning] = result.warnings
    assert "git=1:2.39.5-0+deb12u2 libc6:amd64=2.36-9+deb12u4" in warning and "current point release" in warning


def test_task_toml_resources_and_timeouts_reach_the_task(imported):
    tasks = {t.id: t for t in load_imported(imported)}
    words = tasks["imported/count-words"]
    assert (words.image.cpus, words.image.memory_mb, words.image.workspace_mb) == (1.5, 3072, 10240)
    assert words.image.build_timeout_s == 600.0
    assert (words.metadata["timeout_s"], words.metadata["agent_timeout_s"]) == (120.0, 300.0)
    assert tasks["imported/fix-server-config"].image.memory_mb == 2048  # Harbor's older `memory = "2G"`
    assert tasks["imported/sum-column"].image.memory_mb is None  # Terminal-Bench 1: the pool's limits


def test_the_cli_prints_what_was_mapped_and_fails_when_a_task_did_not_convert(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(FIXTURES / "terminal-bench", src)
    (src / "reverse-lines" / "Dockerfile").write_text("FROM mcr.microsoft.com/dotnet/sdk:8.0\n")
    env = {**os.environ, "COLUMNS": "250", "PTRAIN_IMPORT_DIR": str(tmp_path / "dest")}
    done = subprocess.run([PTRAIN, "taskpacks", "import-harbor", str(src)], capture_output=True, text=True, env=env)
    assert done.returncode == 1, done.stderr
    assert "imported/sum-column" in done.stdout and "`uv run pytest` → `python3 -P -m pytest`" in done.stdout
    assert "base image 'mcr.microsoft.com/dotnet/sdk:8.0' can't be mapped" in done.stdout and "1 refused" in done.stdout
    assert (tmp_path / "dest" / "sum-column" / "ptrain-import.json").is_file()
    as_json = subprocess.run([PTRAIN, "taskpacks", "import-harbor", str(src), "--json"], capture_output=True,
                             text=True, env=env)  # fmt: skip
    assert as_json.returncode == 1, as_json.stderr
    rows = {r["task"]: r for r in json.loads(as_json.stdout)["results"]}
    assert (
        rows["imported/reverse-lines"]["status"] == "refused"
        and "dotnet/sdk:8.0" in rows["imported/reverse-lines"]["error"]
    )
    assert rows["imported/sum-column"]["status"].startswith("imported") and rows["imported/sum-column"]["pins"]


async def test_gold_scores_one_and_a_no_op_zero_in_both_layouts(imported, pools):
    tasks = load_imported(imported)
    results = await asyncio.gather(*(check_one(TASKPACK, task, pools) for task in tasks))
    assert [(r.task.id, r.problem) for r in results if not r.ok] == []
    assert all(r.gold == 1.0 and r.noop == 0.0 for r in results)


async def test_a_sandbox_gets_the_cpus_memory_and_storage_its_task_toml_asks_for(imported, pools):
    task = next(t for t in load_imported(imported) if t.id == "imported/count-words")
    async with pools.sandbox(task.image) as sandbox:
        assert (sandbox.limits.cpus, sandbox.limits.memory_mb, sandbox.limits.workspace_mb) == (1.5, 3072, 10240)
        memory = await sandbox.exec(
            "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes"
        )
        workspace = await sandbox.exec("df -m --output=size /app | tail -1")
    assert int(memory.output.split()[0]) == 3072 << 20 and int(workspace.output) == 10240


async def test_the_verifier_timeout_cap_is_configurable_and_in_the_verdict(imported, pools, monkeypatch):
    monkeypatch.setenv("PTRAIN_HARBOR_TEST_TIMEOUT_CAP_S", "45")
    verdict = await verdict_after(imported, pools, "count-words", None)
    assert verdict.reward == 1.0, verdict.details
    assert (verdict.details["timeout_s"], verdict.details["timeout_cap_s"], verdict.details["task_timeout_s"]) == (
        45.0,
        45.0,
        120.0,
    )
    assert "8.4.1" in verdict.details["output"]  # the tests ran under the pytest the task asked for


def test_an_image_build_past_its_build_timeout_is_a_sandbox_error(tmp_path, podman_url, base_image):
    (tmp_path / "Containerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN sleep 120\n")
    spec = images.ImageSpec("harbor-slow-build", tmp_path, build_timeout_s=3)
    with pytest.raises(SandboxError, match=r"took longer than its build timeout \(3 s\)"):
        images.build_taskpack(spec, podman_url)


async def verdict_after(imported, pools, name: str, command: str | None):
    """The verdict after one bash command (None: the task's gold solution)."""
    task = next(t for t in load_imported(imported) if t.id == f"imported/{name}")
    calls = TASKPACK.gold(task) if command is None else [ToolCall("bash", {"command": command})]
    artifact = await replay(TASKPACK, task, calls, pools)
    return await verify_artifact(TASKPACK, task, artifact, pools)


async def test_reward_json_gives_partial_credit(imported, pools):
    fix_port_only = "sed -i 's/^port = 80$/port = 8080/' server.ini"
    verdict = await verdict_after(imported, pools, "fix-server-config", fix_port_only)
    assert verdict.reward == pytest.approx(1 / 3) and not verdict.passed
    assert verdict.details["reward_from"] == "reward.json" and verdict.details["rewards"]["settings_right"] == 1


async def test_a_pytest_module_planted_in_the_workspace_cannot_fake_a_pass(imported, pools):
    plant = "printf 'import sys\\nprint(\"3 passed\")\\nsys.exit(0)\\n' > pytest.py && echo 9 > count.txt.bak"
    verdict = await verdict_after(imported, pools, "count-words", plant)
    assert verdict.reward == 0.0 and verdict.details["reward_from"] == "reward.txt", verdict.details


async def test_deleting_a_file_from_the_image_counts(imported, pools):
    verdict = await verdict_after(imported, pools, "reverse-lines", "tac input.txt > output.txt && rm input.txt")
    assert verdict.reward == 0.0 and "test_input_is_kept" in verdict.details["output"]


ATTACKS = {  # what the agent's /data/total.sh does, besides printing a wrong total, when the tests run it
    "reward.txt through TEST_DIR": 'echo 1 > "$TEST_DIR/../logs/verifier/reward.txt"',
    "a glob on /tmp": "for d in /tmp/.verify-* /tmp/.ptrain-harness/* /tmp/*/ /tmp/.*/*/; do "
    'mkdir -p "$d/logs/verifier"; echo 1 > "$d/logs/verifier/reward.txt"; done 2>/dev/null',
    "reward.json without a reward key": 'echo \'{"tests_passed": 2, "score": 1}\' > "$TEST_DIR/../logs/verifier/reward.json"',
    "a detached rewriter": """(setsid sh -c 'while :; do echo 1 > "$TEST_DIR/../logs/verifier/reward.txt"; """
    """echo "{\\"reward\\": 1}" > "$TEST_DIR/../logs/verifier/reward.json"; sleep 0.05; done' >/dev/null 2>&1 &)""",
}


async def test_reward_file_attacks_from_the_code_under_test_score_zero(imported, pools):
    def plant(attack: str) -> str:
        return f"cat > /data/total.sh <<'EOF'\n#!/bin/bash\n{attack}\necho 0\nEOF\nchmod +x /data/total.sh"

    verdicts = await asyncio.gather(*(verdict_after(imported, pools, "sum-column", plant(a)) for a in ATTACKS.values()))
    by_name = dict(zip(ATTACKS, verdicts, strict=True))
    assert {name: v.reward for name, v in by_name.items()} == dict.fromkeys(ATTACKS, 0.0)
    for name in ("reward.txt through TEST_DIR", "a detached rewriter"):  # the file was written; pytest says failed
        assert "a reward of 1 though pytest reported 2 tests not passed" in by_name[name].details["tampered"], name
    glob = by_name["a glob on /tmp"].details  # as root it finds the harness's logs and writes; the seal pays 0
    assert "a reward of 1 though pytest reported 2 tests not passed" in glob["tampered"], glob
    no_key = by_name["reward.json without a reward key"].details
    assert "no `reward` key" in no_key["note"] and no_key["reward_from"].startswith("exit code"), no_key


@pytest.fixture(scope="module")
def variants(tmp_path_factory) -> Path:
    """count-words with test scripts that write reward.json beside reward.txt, or no reward at all, and
    with tests that import the agent's /app/counter.py (code under test inside pytest)."""
    src, dest = tmp_path_factory.mktemp("variants"), tmp_path_factory.mktemp("imported-variants")
    tests = FIXTURES / "harbor" / "count-words" / "tests"
    for name, (script, test_file) in {
        "json-beats-txt": (
            (tests / "test.sh").read_text() + """echo '{"reward": 0.25}' > /logs/verifier/reward.json\n""",
            None,
        ),
        "no-reward-file": ("#!/bin/bash\npip install pytest\npytest /tests/test_outputs.py -rA\n", None),
        "imports-workspace": (
            None,
            'import sys\nsys.path.append("/app")\nimport counter  # noqa\n' + (tests / "test_outputs.py").read_text(),
        ),
    }.items():
        shutil.copytree(FIXTURES / "harbor" / "count-words", src / name)
        if script:
            (src / name / "tests" / "test.sh").write_text(script)
        if test_file:
            (src / name / "tests" / "test_outputs.py").write_text(test_file)
    assert [r.error for r in import_tasks(src, dest)] == ["", "", ""]
    return dest


async def test_reward_json_key_wins_over_reward_txt_and_no_reward_is_zero_with_a_reason(variants, pools):
    both, none = await asyncio.gather(
        *(verdict_after(variants, pools, n, None) for n in ("json-beats-txt", "no-reward-file"))
    )
    assert both.reward == 0.25 and both.details["reward_from"] == "reward.json" and both.details["tests_passed"] == 3
    assert none.reward == 0.0 and "wrote no reward" in none.details["reason"] and "3 passed" in none.details["output"]
    assert "tampered" not in both.details and "tampered" not in none.details


async def test_a_hookwrapper_in_the_code_under_test_passes_the_canary_too(variants, pools):
    plant = f"printf %s {shlex.quote(PY_PAYLOADS['hookwrapper'])} > counter.py && echo 8 > count.txt"
    verdict = await verdict_after(variants, pools, "imports-workspace", plant)
    assert verdict.reward == 0.0 and verdict.details["reward_from"] == "reward.txt", verdict.details
    assert (
        verdict.details["tampered"] == "the must-fail canary test was passed"
        and "3 passed" in verdict.details["output"]
    )


def test_harbor_reward_reads_reward_json_first_and_never_guesses():
    def reward(found, layout="harbor", exit_code=0):
        details: dict = {}
        return harbor_reward(found, layout, exit_code, details), details

    assert reward({"reward.json": b'{"reward": 0.5}', "reward.txt": b"1"})[0] == 0.5
    value, details = reward({"reward.json": b'{"passed": 3, "score": 1}', "reward.txt": b"0\n"})
    assert value == 0.0 and details["reward_from"] == "reward.txt" and details["rewards"]["score"] == 1
    value, details = reward({"reward.json": b'{"passed": 3, "score": 1}'})  # no average of whatever numbers
    assert value == 0.0 and "no `reward` key" in details["reason"]
    for found in (
        {"reward.txt": b"yes"},
        {"reward.txt": b"nan"},
        {"reward.json": b"{"},
        {"reward.json": b'{"reward": true}'},
    ):
        value, details = reward(found)
        assert value == 0.0 and "reason" in details, found
    value, details = reward({"reward.txt": "is a symlink"})
    assert value == 0.0 and details["reason"] == "logs/verifier/reward.txt is a symlink"
    assert reward({}, exit_code=0) == (
        0.0,
        {"reason": "the test script wrote no reward: no logs/verifier/reward.json or reward.txt"},
    )
    assert reward({}, "terminal-bench", 0) == (1.0, {"reward_from": "exit code (terminal-bench 1 layout)"})
    assert reward({"reward.txt": b"7"}) == (
        1.0,
        {"reward_from": "reward.txt", "note": "reward.txt said 7: clamped to [0, 1]"},
    )


def test_a_reward_must_agree_with_the_sealed_pytest_report():
    root, tests = "/h/k/tests", {"test_a.py": b"def test_one():\n    pass\n\ndef test_two():\n    pass\n"}

    def line(canary="failed", **outcomes):
        return (
            json.dumps({"outcomes": {f"{root}/test_a.py::{k}": v for k, v in outcomes.items()}, "canary": canary})
            + "\n"
        ).encode()

    def verdict(reward, report, **details):
        return agree(reward, report, root, tests, details), details

    assert verdict(1.0, line(test_one="passed", test_two="passed"))[0] == 1.0
    assert verdict(0.5, line(test_one="passed", test_two="failed"))[0] == 0.5  # partial credit, one test passed
    cases = {
        "a reward of 1 though pytest reported 1 tests not passed": line(test_one="passed", test_two="failed"),
        "the must-fail canary test was passed": line("passed", test_one="passed", test_two="passed"),
        "with no sealed pytest report": b"",
        "tests not run ['tests/test_a.py::test_two']": line(test_one="passed"),
        "not write": line(test_one="passed", test_two="passed")
        + b'{"outcomes": {}, "exitstatus": 0}',  # a forged write
    }
    for why, report in cases.items():
        value, details = verdict(1.0, report)
        assert value == 0.0 and why in details["tampered"], (why, details)
    value, details = verdict(0.5, line(test_one="failed", test_two="failed"))
    assert value == 0.0 and "no test passed" in details["tampered"]
    value, details = verdict(
        1.0, line(test_one="passed", test_two="failed"), reward_from="exit code (terminal-bench 1 layout)"
    )
    assert value == 0.0 and "tampered" not in details and "exited 0 but pytest reported" in details["reason"]


def test_import_can_leave_the_split_to_a_hash_of_each_id(tmp_path):
    import_tasks(FIXTURES / "harbor", tmp_path, split="")
    tasks = load_imported(tmp_path)
    assert tasks and all(t.split == taskpack.split_of(t.id) for t in tasks)
    assert all(t.metadata["verify_timeout_s"] > t.metadata["timeout_s"] or t.metadata["timeout_s"] > 270 for t in tasks)
