import importlib
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ENV = {**os.environ, "PYTHONPATH": "/workspace/src"}


def cli(*args, notes):
    env = {**ENV, "NOTEWISE_FILE": str(notes)}
    return subprocess.run(
        [sys.executable, "-m", "notewise", *args], capture_output=True, text=True, env=env, cwd="/", timeout=60
    )


def test_the_package_imports_with_its_version():
    out = subprocess.run([sys.executable, "-c", "import notewise; print(notewise.__version__); print(notewise.Note, notewise.Store)"],
                         capture_output=True, text=True, env=ENV, cwd="/", timeout=60)  # fmt: skip
    assert out.returncode == 0, out.stderr
    project = tomllib.loads(Path("/workspace/pyproject.toml").read_text())["project"]
    version = project.get("version")
    assert out.stdout.splitlines()[0] == "2.3.0"
    assert version in ("2.3.0", None)
    if version is None:
        assert "version" in project.get("dynamic", [])


def test_python_dash_m_runs_the_cli(tmp_path):
    notes = tmp_path / "n.json"
    assert cli("add", "buy milk", "--tag", "home", notes=notes).stdout.strip() == "1"
    assert cli("add", "ship release", "--tag", "work", "--tag", "urgent", notes=notes).stdout.strip() == "2"
    assert cli("add", "call mum", "--tag", "home", notes=notes).stdout.strip() == "3"
    out = cli("list", notes=notes)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "1\tbuy milk\thome\n2\tship release\twork,urgent\n3\tcall mum\thome\n"
    assert cli("list", "--tag", "home", notes=notes).stdout == "1\tbuy milk\thome\n3\tcall mum\thome\n"
    assert cli("--version", notes=notes).stdout.strip() == "notewise 2.3.0"


def test_console_scripts_resolve_and_run(tmp_path):
    scripts = tomllib.loads(Path("/workspace/pyproject.toml").read_text())["project"]["scripts"]
    assert set(scripts) == {"notewise", "nw"}
    for name, target in scripts.items():
        module, _, attr = target.partition(":")
        code = ("import sys, importlib\nmod = importlib.import_module(sys.argv[1])\nfn = mod\nfor part in sys.argv[2].split('.'):\n"
                "    fn = getattr(fn, part)\nsys.argv = [sys.argv[3], 'add', 'from ' + sys.argv[3]]\nsys.exit(fn())\n")  # fmt: skip
        env = {**ENV, "NOTEWISE_FILE": str(tmp_path / f"{name}.json")}
        out = subprocess.run(
            [sys.executable, "-c", code, module, attr, name],
            capture_output=True,
            text=True,
            env=env,
            cwd="/",
            timeout=60,
        )
        assert out.returncode == 0, (name, target, out.stderr)
        assert out.stdout.strip() == "1"
        assert cli("list", notes=tmp_path / f"{name}.json").stdout == f"1\tfrom {name}\t\n"


def test_models_and_storage_import_alone():
    for name in ("notewise.storage", "notewise.models", "notewise.commands.cli"):
        out = subprocess.run(
            [sys.executable, "-c", f"import {name}"], capture_output=True, text=True, env=ENV, cwd="/", timeout=60
        )
        assert out.returncode == 0, (name, out.stderr)
    importlib.invalidate_caches()
