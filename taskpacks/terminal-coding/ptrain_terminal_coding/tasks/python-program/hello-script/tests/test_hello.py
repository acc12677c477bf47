import subprocess


def test_hello_py_prints_the_greeting():
    out = subprocess.run(["python3", "/workspace/hello.py"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0
    assert out.stdout.strip() == "Hello from Python"
