import subprocess
from pathlib import Path

WS = Path("/workspace")


def make(*args):
    return subprocess.run(["make", "-C", "/workspace", *args], capture_output=True, text=True, timeout=120)


def test_make_builds_objects_and_greeter():
    for name in ("greeter", "main.o", "greet.o"):
        (WS / name).unlink(missing_ok=True)
    out = make()
    assert out.returncode == 0, out.stdout + out.stderr
    assert (WS / "main.o").is_file() and (WS / "greet.o").is_file()
    run = subprocess.run(["/workspace/greeter", "Ada"], capture_output=True, text=True, timeout=30)
    assert run.stdout.strip() == "Greetings, Ada."
    run = subprocess.run(["/workspace/greeter"], capture_output=True, text=True, timeout=30)
    assert run.stdout.strip() == "Greetings, stranger."


def test_make_clean_removes_outputs():
    assert make().returncode == 0
    out = make("clean")
    assert out.returncode == 0, out.stdout + out.stderr
    for name in ("greeter", "main.o", "greet.o"):
        assert not (WS / name).exists(), name
    assert (WS / "main.c").is_file() and (WS / "greet.c").is_file() and (WS / "greet.h").is_file()
