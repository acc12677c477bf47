import subprocess


def git(*args):
    out = subprocess.run(["git", "-C", "/workspace", *args], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, f"git {args}: {out.stderr}"
    return out.stdout


def test_main_is_unchanged():
    assert git("log", "--format=%s", "main").split("\n")[:2] == ["Add app script", "Add README"]
    assert len(git("rev-list", "main").split()) == 2
    assert "USAGE.md" not in git("ls-tree", "--name-only", "main").split()


def test_docs_usage_has_one_commit_on_top_of_main():
    assert git("rev-parse", "docs/usage^").strip() == git("rev-parse", "main").strip()
    assert git("log", "-1", "--format=%s", "docs/usage").strip() == "Add usage notes"


def test_usage_md_is_committed_on_the_branch():
    assert git("show", "docs/usage:USAGE.md").rstrip("\n") == "Run ./app.sh --help for options."
