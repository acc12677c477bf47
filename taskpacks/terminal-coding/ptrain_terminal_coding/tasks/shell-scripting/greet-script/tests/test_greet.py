import subprocess

import pytest


@pytest.mark.parametrize("name", ["Ada", "Grace", "Linus"])
def test_greet_sh_greets_its_argument(name):
    out = subprocess.run(["bash", "/workspace/greet.sh", name], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0
    assert out.stdout.strip() == f"Hello, {name}!"
