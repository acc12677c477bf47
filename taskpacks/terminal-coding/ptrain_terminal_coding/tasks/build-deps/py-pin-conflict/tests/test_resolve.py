"""Install from pristine copies of vendor/ and tools/install.py with the workspace's requirements.txt."""

import csv
import json
import os
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

PRISTINE = json.loads((Path(__file__).parent / "pristine.json").read_text())
ROWS = [("logs/app.log", 1536, "2024-05-20"), ("db/main.sqlite", 5_368_709, "2024-01-02"), ("a.txt", 12, "2024-05-31"),
        ("b.txt", 12, "2023-12-31"), ("video.mp4", 3 * 1024**3, "2022-02-28"), ("empty", 0, "2024-06-01")]  # fmt: skip


def human(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def setup_tree(tmp_path):
    root = tmp_path / "ci"
    for rel, text in PRISTINE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    shutil.copy("/workspace/requirements.txt", root / "requirements.txt")
    shutil.copytree(
        "/workspace/reportgen", root / "reportgen", symlinks=True, ignore=shutil.ignore_patterns("__pycache__")
    )
    return root


def test_requirements_resolve_without_conflict(tmp_path):
    root = setup_tree(tmp_path)
    out = subprocess.run([sys.executable, "tools/install.py"], cwd=root, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "installed chronos 2.1" in out.stdout and "installed fmtlib 1.0" in out.stdout
    assert sorted(p.name for p in (root / ".deps").iterdir()) == ["chronos", "fmtlib"]


def test_the_report_runs_on_the_resolved_versions(tmp_path):
    root = setup_tree(tmp_path)
    assert (
        subprocess.run([sys.executable, "tools/install.py"], cwd=root, capture_output=True, timeout=60).returncode == 0
    )
    listing = tmp_path / "files.csv"
    with open(listing, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["path", "bytes", "modified"])
        w.writerows(ROWS)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(root / ".deps")
    out = subprocess.run(
        [sys.executable, "-m", "reportgen", str(listing), "--today", "2024-06-01"],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    today = date(2024, 6, 1)
    want = [
        f"{p}\t{human(b)}\t{(today - date.fromisoformat(m)).days} days"
        for p, b, m in sorted(ROWS, key=lambda r: (-r[1], r[0]))
    ]
    want.append(f"total\t{human(sum(r[1] for r in ROWS))}\t{len(ROWS)} files")
    assert out.stdout.splitlines() == want


def test_nothing_vendored_into_the_app():
    names = {p.name for p in Path("/workspace/reportgen").rglob("*.py")}
    assert names <= {"__init__.py", "__main__.py", "report.py"}
    text = "".join(p.read_text() for p in Path("/workspace/reportgen").rglob("*.py"))
    assert "def human_size" not in text and "1024" not in text
