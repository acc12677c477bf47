import os
import subprocess
from pathlib import Path

ENV = {
    **os.environ,
    "GOCACHE": "/tmp/gocache-mr",
    "GOPATH": "/tmp/gopath-mr",
    "GOPROXY": "off",
    "GOFLAGS": "-mod=readonly",
}
WS = Path("/workspace")


def go(*args):
    return subprocess.run(["go", *args], cwd=WS, env=ENV, capture_output=True, text=True, timeout=200)


def test_module_path_and_no_old_references():
    assert go("list", "-m").stdout.strip() == "example.com/billing/invoicer"
    for path in WS.rglob("*"):
        if path.is_file() and path.suffix in (".go", ".mod"):
            text = path.read_text()
            assert "github.com/acme/invoicer" not in text, path
            assert "money.Parse(" not in text and "func Parse(" not in text, path


def test_build_and_vet():
    out = go("build", "./...")
    assert out.returncode == 0, out.stderr
    out = go("vet", "./...")
    assert out.returncode == 0, out.stderr


def test_the_program_and_the_renamed_function(tmp_path):
    exe = tmp_path / "invoicer"
    out = go("build", "-o", str(exe), "./cmd/invoicer")
    assert out.returncode == 0, out.stderr
    run = subprocess.run([str(exe), "coffee=3.50", "cake=4.25", "tea=2"], capture_output=True, text=True, timeout=30)
    assert run.stdout == "coffee 3.50\ncake 4.25\ntea 2.00\ntotal 9.75\n"
    probe = WS / "internal/money/zz_probe_test.go"
    probe.write_text('package money\n\nimport "testing"\n\nfunc TestProbe(t *testing.T) {\n'
                     '\tif c, err := ParseCents("12.3"); err != nil || c != 1230 { t.Fatal(c, err) }\n'
                     '\tif _, err := ParseCents("1.234"); err == nil { t.Fatal("want error") }\n}\n')  # fmt: skip
    try:
        out = go("test", "-run", "TestProbe", "./internal/money")
        assert out.returncode == 0, out.stdout + out.stderr
    finally:
        probe.unlink()
