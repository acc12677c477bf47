cd /workspace && python3 - <<'PY'
from pathlib import Path
src = Path("src/notewise")
(src / "models.py").write_text((src / "models.py").read_text().replace("from dataclasses import dataclass, field\n\nfrom notewise.storage import Store\n", "from dataclasses import dataclass, field\n"))
(src / "__init__.py").write_text('''"""notewise: notes with tags."""

from notewise.models import Note
from notewise.storage import Store

__version__ = "2.3.0"
__all__ = ["Note", "Store", "__version__"]
''')
(src / "__main__.py").write_text("from notewise.commands.cli import main\n\nraise SystemExit(main())\n")
cli = src / "commands" / "cli.py"
cli.write_text(cli.read_text() + "\n\ndef run():\n    return main()\n")
p = Path("pyproject.toml")
s = p.read_text()
s = s.replace('version = "2.3.0"\n', 'dynamic = ["version"]\n')
s = s.replace('notewise = "notewise.cli:main"\nnw = "notewise.cli:run"', 'notewise = "notewise.commands.cli:main"\nnw = "notewise.commands.cli:run"')
s += '\n[tool.setuptools.dynamic]\nversion = {attr = "notewise.__version__"}\n'
p.write_text(s)
PY
PYTHONPATH=src python3 -m notewise --version
