import subprocess
import sys

DOC = """# Project

Intro.

## Usage

```sh
# install it
pip install project
## not a heading either
```

### Options

## Usage

~~~
# comment in a tilde fence
~~~

## Usage ##

## API: v2.0 (beta)

### Options
"""

WANT = """- [Project](#project)
  - [Usage](#usage)
    - [Options](#options)
  - [Usage](#usage-1)
  - [Usage](#usage-2)
  - [API: v2.0 (beta)](#api-v20-beta)
    - [Options](#options-1)
"""


def test_the_cli_on_the_reported_document(tmp_path):
    path = tmp_path / "doc.md"
    path.write_text(DOC)
    out = subprocess.run(
        [sys.executable, "-m", "mdtoc", str(path)], cwd="/workspace", capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == WANT


def test_code_fences_hide_headings():
    from mdtoc.headings import parse

    text = "## A\n```python\n# x\n```\n#### B\n~~~~\n# y\n```\n# still code\n~~~~\n# C\n"
    assert parse(text) == [(2, "A"), (4, "B"), (1, "C")]


def test_duplicates_are_numbered_in_order():
    from mdtoc.toc import build

    text = "## Step\n## Step\n## Other\n## Step\n"
    assert build(text) == "- [Step](#step)\n- [Step](#step-1)\n- [Other](#other)\n- [Step](#step-2)\n"


def test_slug_rules_stay():
    from mdtoc.slug import slugify

    assert slugify("Hello, World!") == "hello-world"
    assert slugify("snake_case and-dash") == "snake_case-and-dash"
    assert slugify("Two  spaces") == "two--spaces"
    assert slugify("Ünïcode ok") == "ünïcode-ok"


def test_no_headings_gives_nothing():
    from mdtoc.toc import build

    assert build("just text\n```\n# code\n```\n") == ""
