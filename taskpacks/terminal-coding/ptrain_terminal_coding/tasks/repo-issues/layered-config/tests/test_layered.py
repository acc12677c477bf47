import copy

DEFAULTS = {
    "debug": False,
    "name": "svc",
    "db": {"host": "localhost", "port": 5432, "pool": {"min": 1, "max": 5}},
    "tags": ["a", "b"],
}


def write(tmp_path, text):
    path = tmp_path / "service.toml"
    path.write_text(text)
    return path


def test_file_tables_merge_recursively(tmp_path):
    import layered

    path = write(tmp_path, "tags = ['c']\n[db]\nport = 5433\n[db.pool]\nmax = 20\n")
    config = layered.load(copy.deepcopy(DEFAULTS), path, {})
    assert config == {
        "debug": False,
        "name": "svc",
        "db": {"host": "localhost", "port": 5433, "pool": {"min": 1, "max": 20}},
        "tags": ["c"],
    }


def test_defaults_are_not_modified(tmp_path):
    import layered

    defaults = copy.deepcopy(DEFAULTS)
    layered.load(defaults, write(tmp_path, "[db.pool]\nmax = 9\n"), {"APP_DB__HOST": "x", "APP_NEW__KEY": "1"})
    assert defaults == DEFAULTS


def test_nested_environment_variables(tmp_path):
    import layered

    env = {"APP_DB__HOST": "db.internal", "APP_DB__POOL__MIN": "3", "HOME": "/root", "XAPP_NAME": "no",
           "APP_NAME": "billing", "APP_CACHE__URL": "redis://r:6379/0"}  # fmt: skip
    config = layered.load(copy.deepcopy(DEFAULTS), tmp_path / "missing.toml", env)
    assert config["db"] == {"host": "db.internal", "port": 5432, "pool": {"min": 3, "max": 5}}
    assert config["name"] == "billing"
    assert config["cache"] == {"url": "redis://r:6379/0"}
    assert "home" not in config and "xapp_name" not in config


def test_environment_beats_file_beats_defaults(tmp_path):
    import layered

    path = write(tmp_path, "name = 'from-file'\n[db]\nhost = 'file-host'\nport = 6000\n")
    config = layered.load(copy.deepcopy(DEFAULTS), path, {"APP_DB__PORT": "7000"})
    assert config["name"] == "from-file"
    assert config["db"]["host"] == "file-host" and config["db"]["port"] == 7000


def test_values_are_coerced():
    import layered

    env = {"APP_DEBUG": "false", "APP_A": "TRUE", "APP_B": "42", "APP_C": "0.25", "APP_D": "hello",
           "APP_E": "-7", "APP_F": "1e", "APP_G": "False"}  # fmt: skip
    config = layered.load({}, None, env)
    assert config == {"debug": False, "a": True, "b": 42, "c": 0.25, "d": "hello", "e": -7, "f": "1e", "g": False}
    assert type(config["b"]) is int and type(config["debug"]) is bool


def test_custom_prefix():
    import layered

    config = layered.load({"x": 1}, None, {"SVC_X": "2", "APP_X": "3"}, prefix="SVC_")
    assert config == {"x": 2}
