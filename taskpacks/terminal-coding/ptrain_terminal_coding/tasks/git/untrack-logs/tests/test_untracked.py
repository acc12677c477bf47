import subprocess
from pathlib import Path


def git(*args, check=True):
    out = subprocess.run(["git", "-C", "/workspace", *args], capture_output=True, text=True, timeout=30)
    if check:
        assert out.returncode == 0, f"git {args}: {out.stderr}"
    return out


def test_no_log_file_is_tracked_in_head():
    files = git("ls-tree", "-r", "--name-only", "HEAD").stdout.split()
    assert [f for f in files if f.endswith(".log")] == []
    assert {"app.py", "requirements.txt", ".gitignore"} <= set(files)


def test_log_files_are_ignored():
    assert git("check-ignore", "-q", "debug.log", check=False).returncode == 0
    assert git("check-ignore", "-q", "logs/server.log", check=False).returncode == 0
    assert git("check-ignore", "-q", "logs/new.log", check=False).returncode == 0
    assert git("check-ignore", "-q", "app.py", check=False).returncode == 1


def test_log_files_stay_on_disk():
    assert Path("/workspace/debug.log").read_text() == "debug line 1\n"
    assert Path("/workspace/logs/server.log").read_text() == "GET / 200\n"


def test_change_is_committed_on_top_of_the_import():
    assert git("log", "--format=%s").stdout.strip().splitlines()[-1] == "Initial import"
    assert len(git("rev-list", "HEAD").stdout.split()) >= 2
    assert git("status", "--porcelain", "--untracked-files=no").stdout.strip() == ""
    assert git("status", "--porcelain", "--", "*.log").stdout.strip() == ""
