import subprocess
from pathlib import Path


def git(*args):
    out = subprocess.run(["git", "-C", "/workspace", *args], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, f"git {args}: {out.stderr}"
    return out.stdout


def test_old_history_is_kept_and_one_commit_added():
    subjects = git("log", "--format=%s", "main").strip().splitlines()
    assert subjects[1:] == ["Document limits", "Lower rate limit", "Add rate limiter settings"]


def test_rate_limit_is_restored_in_the_commit():
    assert git("show", "main:limits.py") == "RATE_LIMIT = 100\nBURST = 20\n"
    assert git("show", "main:LIMITS.md") == "# Limits\n\nSee limits.py.\n"


def test_working_tree_matches():
    assert Path("/workspace/limits.py").read_text() == "RATE_LIMIT = 100\nBURST = 20\n"
    assert git("status", "--porcelain", "--untracked-files=no").strip() == ""
