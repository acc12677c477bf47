import os
import shutil
import subprocess
from pathlib import Path

WS = Path("/workspace")
ENV = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}


def build():
    subprocess.run(["make", "-C", str(WS), "clean"], capture_output=True, timeout=60)
    out = subprocess.run(["make", "-C", str(WS)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def dynamic(path):
    return subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True).stdout


def run(exe, cwd):
    return subprocess.run([str(exe), "3", "4", "5"], capture_output=True, text=True, cwd=cwd, env=ENV, timeout=30)


def test_library_layout_and_soname():
    build()
    lib = WS / "out/lib"
    real = lib / "libtally.so.1.2.0"
    assert real.is_file() and not real.is_symlink()
    assert os.readlink(lib / "libtally.so.1") == "libtally.so.1.2.0"
    assert os.readlink(lib / "libtally.so") == "libtally.so.1"
    assert "Library soname: [libtally.so.1]" in dynamic(real)
    assert (WS / "out/include/tally.h").read_bytes() == (WS / "include/tally.h").read_bytes()


def test_tool_links_dynamically_and_runs_from_anywhere(tmp_path):
    build()
    exe = WS / "out/bin/tallyctl"
    info = dynamic(exe)
    assert "Shared library: [libtally.so.1]" in info
    assert "$ORIGIN" in info
    for cwd in ("/", str(tmp_path), str(WS)):
        out = run(exe, cwd)
        assert out.returncode == 0 and out.stdout == "sum 12 max 5\n", out.stderr


def test_tree_is_relocatable(tmp_path):
    build()
    moved = tmp_path / "elsewhere/out"
    shutil.copytree(WS / "out", moved, symlinks=True)
    subprocess.run(["make", "-C", str(WS), "clean"], capture_output=True, timeout=60)
    assert not (WS / "out").exists()
    out = run(moved / "bin/tallyctl", "/")
    assert out.returncode == 0 and out.stdout == "sum 12 max 5\n", out.stderr
    ldd = subprocess.run(["ldd", str(moved / "bin/tallyctl")], capture_output=True, text=True, env=ENV).stdout
    assert str(moved / "bin/../lib/libtally.so.1") in ldd or str(moved / "lib/libtally.so.1") in ldd, ldd
