import re
import subprocess
from pathlib import Path


def git(*args, check=True):
    out = subprocess.run(["git", "-C", "/workspace", *args], capture_output=True, text=True, timeout=30)
    if check:
        assert out.returncode == 0, f"git {args}: {out.stderr}"
    return out


def test_first_bad_txt_names_the_commit_that_broke_check():
    text = Path("/workspace/first_bad.txt").read_text().strip()
    assert re.fullmatch(r"[0-9a-f]{7,40}", text), text
    full = git("rev-parse", "--verify", "--quiet", f"{text}^{{commit}}").stdout.strip()
    assert git("log", "-1", "--format=%s", full).stdout.strip() == "Refactor step 23"


def test_repository_is_back_on_main_with_its_history():
    assert git("symbolic-ref", "--short", "HEAD").stdout.strip() == "main"
    subjects = git("log", "--format=%s", "main").stdout.strip().splitlines()
    assert len(subjects) == 41
    assert subjects[0] == "Refactor step 40" and subjects[-1] == "Add mathlib and checks"
    assert git("status", "--porcelain", "--untracked-files=no").stdout.strip() == ""
