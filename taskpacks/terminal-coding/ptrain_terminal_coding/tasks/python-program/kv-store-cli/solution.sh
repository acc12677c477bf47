cat > /workspace/kv.py <<'PY'
"""A command-line key-value store kept in a JSON file ($KV_FILE, default /workspace/kv.json)."""

import json
import os
import sys

USAGE = "usage: kv.py set KEY VALUE | get KEY | delete KEY | list"
ARITY = {"set": 3, "get": 2, "delete": 2, "list": 1}


def load(path):
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def save(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=2, sort_keys=True)
    os.replace(tmp, path)


def main(args):
    if not args or ARITY.get(args[0]) != len(args):
        print(USAGE, file=sys.stderr)
        return 2
    path = os.environ.get("KV_FILE", "/workspace/kv.json")
    data = load(path)
    command = args[0]
    if command == "set":
        data[args[1]] = args[2]
        save(path, data)
    elif command == "list":
        for key in sorted(data):
            print(f"{key}={data[key]}")
    elif args[1] not in data:
        print(f"kv.py: no such key: {args[1]}", file=sys.stderr)
        return 1
    elif command == "get":
        print(data[args[1]])
    else:
        del data[args[1]]
        save(path, data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
PY
