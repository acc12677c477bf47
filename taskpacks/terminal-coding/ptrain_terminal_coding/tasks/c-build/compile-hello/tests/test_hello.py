import subprocess


def test_hello_binary_prints_the_greeting():
    out = subprocess.run(["/workspace/hello"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0
    assert out.stdout.strip() == "Hello, C!"
