cd /workspace && python3 - <<'PY'
import configparser
import json
import re
from pathlib import Path


def seconds(text):
    return sum(int(n) * (60 if u == "m" else 1) for n, u in re.findall(r"(\d+)([sm])", text))


def q(s):
    return json.dumps(s)


for ini in sorted(Path("services").glob("*.ini")):
    p = configparser.ConfigParser()
    p.read(ini)
    s, db = p["service"], p["database"]
    feats = [f.strip() for f in s["features"].split(",") if f.strip()]
    out = ["[service]", f"name = {q(s['name'])}", f"port = {int(s['port'])}", f"debug = {'true' if s['debug'] == 'yes' else 'false'}",
           f"timeout_s = {seconds(s['timeout'])}", f"features = [{', '.join(q(f) for f in feats)}]", "", "[database]",
           "url = " + q("postgresql://%s@%s:%s/%s" % (db["user"], db["host"], db["port"], db["name"]))]
    if p.has_section("replica"):
        out += ["", "[replica]", f"host = {q(p['replica']['host'])}", f"lag_alert_s = {seconds(p['replica']['lag_alert'])}"]
    ini.with_suffix(".toml").write_text("\n".join(out) + "\n")
    ini.unlink()
PY
cat > svcctl/config.py <<'PY'
"""Loading a service's configuration (services/NAME.toml)."""

import tomllib
from pathlib import Path

SERVICES = Path(__file__).resolve().parent.parent / "services"


def load(name):
    with open(SERVICES / f"{name}.toml", "rb") as f:
        return tomllib.load(f)


def names():
    return sorted(p.stem for p in SERVICES.glob("*.toml"))
PY
cat > svcctl/__main__.py <<'PY'
import sys

from svcctl.config import load, names

if sys.argv[1:] == ["list"]:
    print("\n".join(names()))
elif len(sys.argv) == 3 and sys.argv[1] == "show":
    c = load(sys.argv[2])
    s = c["service"]
    line = (f"{s['name']} port={s['port']} debug={str(s['debug']).lower()} timeout_s={s['timeout_s']} "
            f"db={c['database']['url']} features={','.join(s['features'])}")
    if "replica" in c:
        line += f" replica={c['replica']['host']}"
    print(line)
else:
    print("usage: python3 -m svcctl list | show NAME", file=sys.stderr)
    sys.exit(2)
PY
cat > README.md <<'MD'
# svcctl

    python3 -m svcctl list
    python3 -m svcctl show billing

Each service has services/NAME.toml:

    [service]
    name = "billing"
    port = 8001
    debug = false
    timeout_s = 90
    features = ["cache", "metrics"]

    [database]
    url = "postgresql://billing@db1.internal:5432/billing_db"

    [replica]            # only for services with a read replica
    host = "replica1.internal"
    lag_alert_s = 5
MD
python3 -m svcctl show billing
