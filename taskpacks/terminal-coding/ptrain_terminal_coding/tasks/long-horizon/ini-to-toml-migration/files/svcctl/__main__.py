import sys

from svcctl.config import load, names

if sys.argv[1:] == ["list"]:
    print("\n".join(names()))
elif len(sys.argv) == 3 and sys.argv[1] == "show":
    c = load(sys.argv[2])
    s, db = c["service"], c["database"]
    line = f"{s['name']} port={s['port']} debug={s['debug']} timeout={s['timeout']} db={db['host']}:{db['port']}/{db['name']} features={s['features']}"
    print(line)
else:
    print("usage: python3 -m svcctl list | show NAME", file=sys.stderr)
    sys.exit(2)
