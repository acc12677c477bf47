import subprocess


def git(*args):
    return subprocess.run(["git", "-C", "/workspace", *args], capture_output=True, text=True, timeout=30)


def test_feature_login_points_at_main():
    branch = git("rev-parse", "--verify", "refs/heads/feature/login^{commit}")
    main = git("rev-parse", "--verify", "refs/heads/main^{commit}")
    assert branch.returncode == 0, branch.stderr
    assert branch.stdout.strip() == main.stdout.strip()


def test_history_is_unchanged():
    assert git("log", "--format=%s", "main").stdout.split("\n")[0] == "Add login stub"
