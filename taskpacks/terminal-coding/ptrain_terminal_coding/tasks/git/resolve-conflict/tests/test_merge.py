import runpy
import subprocess
from pathlib import Path


def git(*args, check=True):
    out = subprocess.run(["git", "-C", "/workspace", *args], capture_output=True, text=True, timeout=30)
    if check:
        assert out.returncode == 0, f"git {args}: {out.stderr}"
    return out


def test_main_is_a_merge_of_both_branches():
    parents = git("rev-list", "--parents", "-n", "1", "main").stdout.split()[1:]
    assert len(parents) == 2
    subjects = {git("log", "-1", "--format=%s", p).stdout.strip() for p in parents}
    assert subjects == {"Move to port 8080", "Add client with timeout"}
    assert git("merge-base", "--is-ancestor", "feature", "main", check=False).returncode == 0


def test_feature_branch_is_unchanged():
    assert git("log", "-1", "--format=%s", "feature").stdout.strip() == "Add client with timeout"


def test_settings_keep_both_changes(tmp_path):
    committed = git("show", "main:settings.py").stdout
    assert "<<<<<<<" not in committed and ">>>>>>>" not in committed and "=======" not in committed
    path = tmp_path / "merged_settings.py"
    path.write_text(committed)
    values = runpy.run_path(str(path))
    assert values["PORT"] == 8080
    assert values["TIMEOUT"] == 30
    assert values["HOST"] == "localhost"
    assert values["DEBUG"] is False


def test_files_from_both_branches_are_merged():
    names = git("ls-tree", "--name-only", "main").stdout.split()
    assert {"client.py", "README.md", "server.py", "settings.py"} <= set(names)


def test_merge_is_finished_and_clean():
    assert not Path("/workspace/.git/MERGE_HEAD").exists()
    assert git("symbolic-ref", "--short", "HEAD").stdout.strip() == "main"
    assert git("status", "--porcelain", "--untracked-files=no").stdout.strip() == ""
