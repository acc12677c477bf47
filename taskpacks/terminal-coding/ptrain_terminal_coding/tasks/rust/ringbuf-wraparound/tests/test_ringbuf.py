import os
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).parent
MANIFEST = '[package]\nname = "ringbuf"\nversion = "0.2.0"\nedition = "2021"\n\n[dependencies]\n'
NAMES = ["full_buffer_evicts_the_oldest", "iteration_is_oldest_first_after_wrapping", "matches_a_vecdeque_model", "non_copy_values",
         "zero_capacity_panics"]  # fmt: skip


def cargo_test(tmp_path):
    crate = tmp_path / "crate"
    crate.mkdir()
    shutil.copytree(
        "/workspace/src", crate / "src", symlinks=True
    )  # the library only: a pristine manifest, no build script or config
    (crate / "Cargo.toml").write_text(MANIFEST)
    (crate / "tests").mkdir()
    shutil.copy(HERE / "hidden_ringbuf.rs", crate / "tests" / "hidden_ringbuf.rs")
    env = {
        **os.environ,
        "CARGO_HOME": str(tmp_path / "cargo-home"),
        "CARGO_TARGET_DIR": str(tmp_path / "target"),
        "CARGO_NET_OFFLINE": "true",
    }
    return subprocess.run(["cargo", "test", "--offline", "--test", "hidden_ringbuf", "--", "--test-threads=2"],
                          cwd=crate, env=env, capture_output=True, text=True, timeout=240)  # fmt: skip


def test_hidden_integration_tests_pass(tmp_path):
    out = cargo_test(tmp_path)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "test result: ok. 5 passed" in out.stdout, out.stdout[-2000:]
    for name in NAMES:
        assert f"test {name} - should panic ... ok" in out.stdout or f"test {name} ... ok" in out.stdout, name
