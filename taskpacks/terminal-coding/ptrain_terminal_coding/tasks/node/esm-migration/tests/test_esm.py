import json
import shutil
import subprocess
from pathlib import Path

WS = Path("/workspace")


def node(*args, cwd=WS, stdin=None):
    return subprocess.run(["node", *args], cwd=cwd, capture_output=True, text=True, input=stdin, timeout=60)


def test_cli_works():
    assert node("bin/textkit.js", "slug", "Crème brûlée: 10 recipes!").stdout == "creme-brulee-10-recipes\n"
    assert node("bin/textkit.js", "truncate", "12", "the quick brown fox").stdout == "the quick…\n"
    assert node("bin/textkit.js", "words", "Hello, big world").stdout == "3\n"
    out = node("bin/textkit.js", "frobnicate")
    assert out.returncode == 2 and "usage" in out.stderr and out.stdout == ""


def test_sources_are_es_modules():
    pkg = json.loads((WS / "package.json").read_text())
    assert pkg["type"] == "module"
    for path in [*WS.glob("src/*.js"), *WS.glob("bin/*.js")]:
        text = path.read_text()
        assert "require(" not in text and "module.exports" not in text, path


def test_importable_as_a_dependency(tmp_path):
    project = tmp_path / "app"
    (project / "node_modules").mkdir(parents=True)
    shutil.copytree(
        WS, project / "node_modules/textkit", symlinks=True, ignore=shutil.ignore_patterns("node_modules", ".*")
    )
    (project / "package.json").write_text('{"name": "app", "type": "module"}')
    (project / "main.js").write_text(
        'import { slugify, truncate, wordCount } from "textkit";\nimport textkit from "textkit";\n'
        'console.log(JSON.stringify([slugify("Ünïcode Text"), truncate("abcdefghij", 5), wordCount("a b c d"),\n'
        "  Object.keys(textkit).sort(), textkit.slugify === slugify]));\n"
    )
    out = node("main.js", cwd=project)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == ["unicode-text", "abcd…", 4, ["slugify", "truncate", "wordCount"], True]


def test_modules_import_alone():
    code = 'const m = await import("/workspace/src/words.js"); console.log(m.wordCount("x-y z"));'
    out = node("--input-type=module", "-e", code)
    assert out.returncode == 0 and out.stdout == "3\n", out.stderr
