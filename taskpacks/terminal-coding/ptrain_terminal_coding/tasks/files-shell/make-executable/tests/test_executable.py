import os
import subprocess


def test_run_py_is_executable_by_its_owner():
    assert os.stat("/workspace/run.py").st_mode & 0o100


def test_run_py_runs_directly():
    out = subprocess.run(["/workspace/run.py"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0
    assert out.stdout.strip() == "running"
