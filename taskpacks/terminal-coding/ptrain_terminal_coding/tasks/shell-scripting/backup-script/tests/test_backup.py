import subprocess


def run(*args):
    return subprocess.run(["bash", "/workspace/backup.sh", *map(str, args)], capture_output=True, text=True, timeout=30)


def make_source(tmp_path):
    src = tmp_path / "etc"
    (src / "sub").mkdir(parents=True)
    (src / "app.conf").write_text("port = 80\n")
    (src / "db.conf").write_text("path = /data\n")
    (src / "my site.conf").write_text("name = site\n")
    (src / "notes.txt").write_text("not a conf\n")
    (src / "app.conf.old").write_text("old\n")
    (src / "sub" / "nested.conf").write_text("nested\n")
    return src


def test_copies_conf_files_into_a_new_directory(tmp_path):
    src = make_source(tmp_path)
    dest = tmp_path / "backup" / "today"
    out = run(src, dest)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "3"
    assert sorted(p.name for p in dest.iterdir()) == ["app.conf.bak", "db.conf.bak", "my site.conf.bak"]
    assert (dest / "my site.conf.bak").read_text() == "name = site\n"
    assert (dest / "app.conf.bak").read_text() == "port = 80\n"
    assert (src / "app.conf").read_text() == "port = 80\n"


def test_existing_destination_is_fine(tmp_path):
    src = make_source(tmp_path)
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "keep.txt").write_text("keep\n")
    out = run(src, dest)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "3"
    assert (dest / "keep.txt").read_text() == "keep\n"
    assert (dest / "db.conf.bak").read_text() == "path = /data\n"


def test_empty_source_copies_nothing(tmp_path):
    src = tmp_path / "empty"
    src.mkdir()
    out = run(src, tmp_path / "dest")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0"


def test_missing_source_is_an_error(tmp_path):
    out = run(tmp_path / "nope", tmp_path / "dest")
    assert out.returncode == 1
    assert out.stderr.strip() != ""
    assert out.stdout.strip() == ""
