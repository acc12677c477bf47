from pathlib import Path

CONTENT = """[server]
host = 0.0.0.0
port = 8080

[database]
path = /var/lib/app/app.db
pool_size = 4
"""


def test_backup_has_the_same_content():
    assert Path("/workspace/config.ini.bak").read_text() == CONTENT


def test_original_is_still_there():
    assert Path("/workspace/config.ini").read_text() == CONTENT
