import subprocess


def git(*args):
    return subprocess.run(["git", "-C", "/workspace", *args], capture_output=True, text=True, timeout=30)


def test_there_is_one_commit_with_the_message():
    log = git("log", "--format=%s")
    assert log.returncode == 0, log.stderr
    assert log.stdout.strip().splitlines() == ["initial commit"]


def test_every_file_is_committed():
    files = set(git("ls-files").stdout.split())
    assert {"README.md", "main.py", "lib/util.py"} <= files
    assert git("status", "--porcelain", "--untracked-files=no").stdout.strip() == ""
