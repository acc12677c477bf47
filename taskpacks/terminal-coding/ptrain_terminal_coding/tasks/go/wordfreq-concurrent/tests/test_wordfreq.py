import os
import random
import re
import subprocess
from collections import Counter

import pytest

ENV = {
    **os.environ,
    "GOCACHE": "/tmp/gocache-wf",
    "GOPATH": "/tmp/gopath-wf",
    "GOPROXY": "off",
    "GOFLAGS": "-mod=readonly",
}
WORDS = [
    "Hello",
    "hello,",
    "HELLO.",
    "world",
    "café",
    "Café!",
    "don't",
    "'tis'",
    "x2",
    "42",
    "a-b",
    "naïve;",
    "''",
    "it's",
    "Über",
]


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    out = tmp_path_factory.mktemp("bin") / "wordfreq"
    done = subprocess.run(
        ["go", "build", "-o", str(out), "."], cwd="/workspace", env=ENV, capture_output=True, text=True, timeout=200
    )
    assert done.returncode == 0, done.stderr
    return out


def reference(texts):
    c = Counter()
    for text in texts:
        for run in re.findall(r"[^\W_]+(?:'+[^\W_]+)*'*|'+", text):
            w = run.strip("'").lower()
            if w:
                c[w] += 1
    return c


def expected(counter, top=0):
    lines = [f"{n} {w}" for w, n in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0].encode()))]
    return lines[:top] if top else lines


def write_files(tmp_path, n, seed):
    r = random.Random(seed)
    texts = []
    for i in range(n):
        text = " ".join(r.choice(WORDS) for _ in range(r.randint(0, 60)))
        text = text.replace(" ", r.choice([" ", "\n", "\t", " -- "]), 3)
        (tmp_path / f"f{i:03d}.txt").write_text(text)
        texts.append(text)
    return [str(tmp_path / f"f{i:03d}.txt") for i in range(n)], texts


def run(binary, *args):
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=60)


def test_words_are_normalised(binary, tmp_path):
    (tmp_path / "a.txt").write_text("Hello hello, HELLO. 'tis' it's don't ''' café Café!\nx2 a-b")
    out = run(binary, str(tmp_path / "a.txt"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["3 hello", "2 café", "1 a", "1 b", "1 don't", "1 it's", "1 tis", "1 x2"]


def test_many_files_exact_every_time(binary, tmp_path):
    paths, texts = write_files(tmp_path, 300, 1)
    want = expected(reference(texts))
    for _ in range(3):
        out = run(binary, *paths)
        assert out.returncode == 0, out.stderr[-500:]
        assert out.stdout.splitlines() == want


def test_top(binary, tmp_path):
    paths, texts = write_files(tmp_path, 40, 2)
    assert run(binary, "-top", "3", *paths).stdout.splitlines() == expected(reference(texts), 3)
    assert run(binary, "-top", "0", *paths).stdout.splitlines() == expected(reference(texts))


def test_unreadable_files_are_reported_and_the_rest_counted(binary, tmp_path):
    paths, texts = write_files(tmp_path, 5, 3)
    missing = str(tmp_path / "nope.txt")
    out = run(binary, paths[0], missing, *paths[1:])
    assert out.returncode == 1
    assert out.stderr.startswith(f"wordfreq: {missing}: ") or f"wordfreq: {missing}:" in out.stderr
    assert out.stdout.splitlines() == expected(reference(texts))
