import random
import re
import subprocess
import sys
import tomllib
from pathlib import Path


def make_configs(seed=17):
    r = random.Random(seed)
    names = [
        "auth",
        "billing",
        "catalog",
        "cart",
        "search",
        "mailer",
        "reports",
        "images",
        "gateway",
        "ledger",
        "notify",
        "audit",
    ]
    configs = {}
    for i, name in enumerate(names):
        timeout = r.choice(["30s", "2m", "45s", "1m30s", "90s"])
        feats = r.sample(["cache", "metrics", "tracing", "beta-ui", "rate-limit"], r.randint(0, 3))
        lines = [
            "[service]",
            f"name = {name}",
            f"port = {8000 + i}",
            f"debug = {r.choice(['yes', 'no'])}",
            f"timeout = {timeout}",
            f"features = {', '.join(feats)}",
            "",
            "[database]",
            f"host = db{r.randint(1, 3)}.internal",
            f"port = {r.choice([5432, 5433])}",
            f"name = {name}_db",
            f"user = {name}",
        ]
        if r.random() < 0.4:
            lines += [
                "",
                "[replica]",
                f"host = replica{r.randint(1, 2)}.internal",
                f"lag_alert = {r.choice(['5s', '1m'])}",
            ]
        configs[name] = "\n".join(lines) + "\n"
    return configs


WS = Path("/workspace")


def seconds(text):
    total = 0
    for n, unit in re.findall(r"(\d+)([sm])", text):
        total += int(n) * (60 if unit == "m" else 1)
    return total


def expected(ini):
    sections, cur = {}, None
    for line in ini.splitlines():
        if line.startswith("["):
            cur = sections.setdefault(line.strip("[]"), {})
        elif "=" in line:
            k, _, v = line.partition("=")
            cur[k.strip()] = v.strip()
    s, db = sections["service"], sections["database"]
    out = {"service": {"name": s["name"], "port": int(s["port"]), "debug": s["debug"] == "yes", "timeout_s": seconds(s["timeout"]),
                       "features": [f.strip() for f in s["features"].split(",") if f.strip()]},
           "database": {"url": f"postgresql://{db['user']}@{db['host']}:{db['port']}/{db['name']}"}}  # fmt: skip
    if "replica" in sections:
        out["replica"] = {"host": sections["replica"]["host"], "lag_alert_s": seconds(sections["replica"]["lag_alert"])}
    return out


def test_every_service_is_converted():
    configs = make_configs()
    assert not list((WS / "services").glob("*.ini"))
    assert sorted(p.stem for p in (WS / "services").glob("*.toml")) == sorted(configs)
    for name, ini in configs.items():
        assert tomllib.loads((WS / f"services/{name}.toml").read_text()) == expected(ini), name


def test_loader_reads_toml():
    from svcctl import config

    text = (WS / "svcctl/config.py").read_text()
    assert "configparser" not in text and "tomllib" in text
    for name, ini in make_configs().items():
        assert config.load(name) == expected(ini)


def test_cli():
    configs = make_configs()
    out = subprocess.run([sys.executable, "-m", "svcctl", "list"], cwd=WS, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == sorted(configs)
    for name, ini in configs.items():
        e = expected(ini)
        s = e["service"]
        want = f"{name} port={s['port']} debug={str(s['debug']).lower()} timeout_s={s['timeout_s']} db={e['database']['url']} features={','.join(s['features'])}"
        if "replica" in e:
            want += f" replica={e['replica']['host']}"
        out = subprocess.run(
            [sys.executable, "-m", "svcctl", "show", name], cwd=WS, capture_output=True, text=True, timeout=60
        )
        assert out.stdout.strip() == want, name


def test_readme_documents_toml():
    text = (WS / "README.md").read_text()
    assert ".toml" in text and "timeout_s" in text and ".ini" not in text
