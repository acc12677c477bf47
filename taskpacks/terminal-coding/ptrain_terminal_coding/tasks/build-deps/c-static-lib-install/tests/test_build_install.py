import os
import subprocess
import time
from pathlib import Path

WS = Path("/workspace")


def make(*args, env=None):
    return subprocess.run(["make", "-C", str(WS), *args], capture_output=True, text=True, timeout=180, env=env)


def fresh():
    make("clean")
    out = make()
    assert out.returncode == 0, out.stdout + out.stderr


def tool(*args):
    return subprocess.run([str(WS / "bin/geomtool"), *args], capture_output=True, text=True, timeout=30).stdout.strip()


def test_build_and_run():
    fresh()
    assert (WS / "build/libgeom.a").is_file()
    members = subprocess.run(["ar", "t", str(WS / "build/libgeom.a")], capture_output=True, text=True).stdout.split()
    assert sorted(members) == ["poly.o", "vec.o"]
    assert tool("area", "0,0", "4,0", "4,3") == "6.000"
    assert tool("perimeter", "0,0", "4,0", "4,3") == "12.000"
    assert tool("area", "0,0", "2,0", "2,2", "0,2") == "4.000"


def age_everything():
    old = time.time() - 300
    for p in WS.rglob("*"):
        if p.is_file() and ".git" not in p.parts:
            os.utime(p, (old, old))
    built = time.time() - 100
    for p in [*WS.glob("build/**/*"), *WS.glob("bin/*")]:
        if p.is_file():
            os.utime(p, (built, built))


def test_incremental_rebuilds():
    fresh()
    age_everything()
    assert make("-q").returncode == 0, "make right after a build must have nothing to do"
    os.utime(WS / "lib/src/vec.c", None)
    assert make("-q", "bin/geomtool").returncode == 1
    assert make("-q", "build/libgeom.a").returncode == 1
    assert make().returncode == 0 and make("-q").returncode == 0
    age_everything()
    os.utime(WS / "lib/include/geom/vec.h", None)
    out = make()
    assert out.returncode == 0
    assert out.stdout.count("poly.c") >= 1 and out.stdout.count("vec.c") >= 1 and "main.c" in out.stdout, out.stdout


def test_install_with_prefix_and_destdir(tmp_path):
    make("clean")
    prefix = tmp_path / "prefix"
    out = make("install", f"PREFIX={prefix}")
    assert out.returncode == 0, out.stdout + out.stderr
    assert (prefix / "bin/geomtool").is_file() and os.access(prefix / "bin/geomtool", os.X_OK)
    assert (prefix / "lib/libgeom.a").is_file()
    assert sorted(p.name for p in (prefix / "include/geom").iterdir()) == ["poly.h", "vec.h"]
    prog = tmp_path / "prog.c"
    prog.write_text('#include <stdio.h>\n#include <geom/poly.h>\nint main(void) { geom_vec p[3] = {{0,0},{3,0},{0,4}};\n'
                    'printf("%.1f %.1f\\n", geom_area(p, 3), geom_perimeter(p, 3)); return 0; }\n')  # fmt: skip
    exe = tmp_path / "prog"
    out = subprocess.run(
        ["gcc", f"-I{prefix}/include", str(prog), f"-L{prefix}/lib", "-lgeom", "-lm", "-o", str(exe)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert subprocess.run([str(exe)], capture_output=True, text=True).stdout == "6.0 12.0\n"
    stage = tmp_path / "stage"
    out = make("install", "PREFIX=/opt/geom", f"DESTDIR={stage}")
    assert out.returncode == 0, out.stdout + out.stderr
    assert (stage / "opt/geom/bin/geomtool").is_file() and (stage / "opt/geom/include/geom/vec.h").is_file()


def test_clean():
    fresh()
    assert make("clean").returncode == 0
    assert not (WS / "build").exists() and not (WS / "bin").exists()
