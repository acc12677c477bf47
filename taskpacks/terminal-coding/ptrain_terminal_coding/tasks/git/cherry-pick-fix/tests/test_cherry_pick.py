import subprocess


def git(*args, check=True):
    out = subprocess.run(["git", "-C", "/workspace", *args], capture_output=True, text=True, timeout=30)
    if check:
        assert out.returncode == 0, f"git {args}: {out.stderr}"
    return out


def test_main_has_the_fix_on_top_of_its_old_history():
    subjects = git("log", "--format=%s", "main").stdout.strip().splitlines()
    assert subjects == ["Support G suffix in parse_size", "Add size parser"]


def test_main_has_only_the_fix():
    assert '"G": 1024 ** 3' in git("show", "main:units.py").stdout
    assert "argparse" not in git("show", "main:cli.py").stdout
    assert "flags.py" not in git("ls-tree", "--name-only", "main").stdout.split()


def test_experimental_is_untouched_and_not_merged():
    subjects = git("log", "--format=%s", "experimental").stdout.strip().splitlines()
    assert subjects == ["WIP: feature flags", "Support G suffix in parse_size", "WIP: rewrite cli", "Add size parser"]
    assert git("merge-base", "--is-ancestor", "experimental", "main", check=False).returncode == 1


def test_parse_size_works_on_main():
    out = subprocess.run(["python3", "-c", "import units; print(units.parse_size('2G'))"], cwd="/workspace", capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == str(2 * 1024 ** 3)
