import tarfile

EXPECTED = {
    "project/src/main.py": b"from util import add\n\nprint(add(1, 2))\n",
    "project/src/util.py": b"def add(a, b):\n    return a + b\n",
    "project/README.md": b"# Project\n",
    "project/docs/usage.txt": b"Usage: python3 src/main.py\n",
}


def members():
    with tarfile.open("/workspace/project.tar.gz", "r:gz") as tar:
        out = {}
        for m in tar.getmembers():
            if m.isfile():
                name = m.name[2:] if m.name.startswith("./") else m.name
                out[name] = tar.extractfile(m).read()
        return out


def test_archive_holds_the_project_files():
    files = members()
    for name, content in EXPECTED.items():
        assert files.get(name) == content, name


def test_archive_has_no_pyc_files_and_nothing_else():
    assert sorted(members()) == sorted(EXPECTED)
