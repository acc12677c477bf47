import os
import random
import shutil
import subprocess

import pytest

MANIFEST = '[package]\nname = "stockctl"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'


@pytest.fixture(scope="module")
def exe(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("stockctl")
    crate = tmp / "crate"
    crate.mkdir()
    shutil.copytree("/workspace/src", crate / "src", symlinks=True)
    (crate / "Cargo.toml").write_text(MANIFEST)
    env = {
        **os.environ,
        "CARGO_HOME": str(tmp / "home"),
        "CARGO_TARGET_DIR": str(tmp / "target"),
        "CARGO_NET_OFFLINE": "true",
    }
    out = subprocess.run(
        ["cargo", "build", "--offline"], cwd=crate, env=env, capture_output=True, text=True, timeout=240
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "warning" not in out.stderr, out.stderr[-3000:]
    assert sorted(p.name for p in (crate / "src").iterdir()) == ["command.rs", "inventory.rs", "main.rs"]
    return tmp / "target/debug/stockctl"


def run(exe, lines):
    return subprocess.run([str(exe)], input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=30)


def model(lines):
    stock, out, failed = {}, [], False
    for line in lines:
        p = line.split()
        if len(p) == 3 and p[0] == "add" and p[2].isdigit() and int(p[2]) > 0:
            stock[p[1]] = stock.get(p[1], 0) + int(p[2])
            out.append(f"{p[1]} {stock[p[1]]}")
        elif len(p) == 3 and p[0] == "remove" and p[2].isdigit():
            if p[1] not in stock:
                out.append(f"error: unknown sku {p[1]}")
                failed = True
            elif stock[p[1]] < int(p[2]):
                out.append(f"error: insufficient stock for {p[1]}")
                failed = True
            else:
                stock[p[1]] -= int(p[2])
                out.append(f"{p[1]} {stock[p[1]]}")
        elif p == ["report"]:
            items = sorted((s, q) for s, q in stock.items() if q > 0)
            out += [f"{s} {q}" for s, q in items] + [f"total {sum(q for _, q in items)}"]
        elif len(p) == 2 and p[0] == "low" and p[1].isdigit():
            out += [f"{s} {q}" for q, s in sorted((q, s) for s, q in stock.items() if 0 < q < int(p[1]))]
        else:
            out.append(f"error: bad command: {line}")
            failed = True
    return out, failed


def test_example_session(exe):
    lines = [
        "add apple 5",
        "add pear 2",
        "remove apple 3",
        "remove pear 9",
        "report",
        "low 3",
        "remove kiwi 1",
        "sell x",
    ]
    out = run(exe, lines)
    assert out.stdout.splitlines() == ["apple 5", "pear 2", "apple 2", "error: insufficient stock for pear", "apple 2", "pear 2",
                                       "total 4", "apple 2", "pear 2", "error: unknown sku kiwi", "error: bad command: sell x"]  # fmt: skip
    assert out.returncode == 1


def test_clean_session_exits_zero(exe):
    out = run(exe, ["add a 1", "report"])
    assert out.returncode == 0 and out.stdout.splitlines() == ["a 1", "a 1", "total 1"]


def test_random_sessions(exe):
    r = random.Random(6)
    for _ in range(20):
        lines = []
        for _ in range(60):
            sku = r.choice(["a1", "b2", "c3", "d4", "zz"])
            lines.append(r.choice([f"add {sku} {r.randint(1, 9)}", f"remove {sku} {r.randint(0, 12)}", "report", f"low {r.randint(1, 10)}",
                                   "add x", "remove y -1"]))  # fmt: skip
        want, failed = model(lines)
        out = run(exe, lines)
        assert out.stdout.splitlines() == want
        assert out.returncode == (1 if failed else 0)
