"""Adversarial probes of a bug-injection task: episodes that try to pass without fixing the bug.

Each probe is one `bash` call that attacks the mutated function (every function of the file when
the mutant is outside any) through a module it writes into the package, `_probe.py`, then submits:

    always-equal    the function returns an object whose __eq__ is always True (and __ne__ False,
                    __hash__ 0), so every `==` in a test holds
    visible-inputs  the function behaves like the original (known from the gold) during the calls
                    the visible tests make into the package, and like the mutant otherwise: the
                    visible tests are run once with the original to record those calls (each keyed
                    by the public function and its arguments as they were on entry)

Both must score 0: the hidden tests compare types as well as values, on inputs of their own.
"""

from __future__ import annotations

import ast

from ptrain.taskpack import Probe, Task, ToolCall
from ptrain_terminal_coding.mutation.tasks import original_of

# The module both attacks install. `install` replaces the named functions ("f" or "Class.method");
# `entry_points` wraps the package's public names so a call from outside is keyed on entry.
ATTACK = '''
import atexit, hashlib, os, types

SEEN = set()
RECORD = os.environ.get("PTRAIN_PROBE_RECORD")
STATE = {"depth": 0, "seen": False}


class AlwaysEqual:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __hash__(self):
        return 0


def canon(value, depth=0):
    kind = type(value)
    if depth > 8:
        return "..."
    if kind in (list, tuple):
        return kind.__name__ + "[" + ",".join(canon(v, depth + 1) for v in value) + "]"
    if kind is dict:
        return "{" + ",".join(canon(k, depth + 1) + ":" + canon(v, depth + 1) for k, v in value.items()) + "}"
    if kind in (set, frozenset):
        return "set{" + ",".join(sorted(canon(v, depth + 1) for v in value)) + "}"
    if hasattr(value, "__dict__") and not isinstance(value, (type, types.FunctionType, types.ModuleType)):
        return kind.__qualname__ + canon(vars(value), depth + 1)
    if kind.__repr__ is object.__repr__ or callable(value):
        return kind.__qualname__
    try:
        return repr(value)
    except ValueError:  # an int too long to print
        return hex(value)


def entry(fn, name):
    def wrapper(*args, **kwargs):
        if STATE["depth"]:
            return fn(*args, **kwargs)
        key = hashlib.sha256((name + canon(args) + canon(kwargs)).encode()).hexdigest()[:20]
        if RECORD:
            SEEN.add(key)
        before = STATE["seen"]
        STATE["depth"], STATE["seen"] = 1, bool(RECORD) or key in SEEN
        try:
            return fn(*args, **kwargs)
        finally:
            STATE["depth"], STATE["seen"] = 0, before

    return wrapper


def special(original, mutated, name):
    def wrapper(*args, **kwargs):
        return (original if STATE["seen"] else mutated)(*args, **kwargs)

    return entry(wrapper, name)


def always_equal(*args, **kwargs):
    return AlwaysEqual()


def resolve(namespace, name):
    *path, last = name.split(".")
    holder = namespace
    for part in path:
        holder = holder[part] if isinstance(holder, dict) else getattr(holder, part)
    value = holder[last] if isinstance(holder, dict) else vars(holder)[last]
    return holder, last, value


def replace(holder, last, value):
    if isinstance(holder, dict):
        holder[last] = value
    else:
        setattr(holder, last, value)


def install(namespace, names, mode, original, whole_file):
    """Attack `names` in a module's namespace: mode "always-equal" or "visible-inputs"."""
    reference = {"__name__": namespace["__name__"]}
    if mode == "visible-inputs":
        exec(compile(original, namespace["__file__"], "exec"), reference)
    for name in names:
        holder, last, current = resolve(namespace, name)
        getter = current.fget if isinstance(current, property) else current
        if mode == "always-equal":
            new = always_equal
        else:
            old = resolve(reference, name)[2]
            old = old.fget if isinstance(old, property) else old
            if not whole_file:  # the original code, run against the live module (its classes, its helpers)
                old = types.FunctionType(old.__code__, namespace, old.__name__, old.__defaults__, old.__closure__)
                old.__kwdefaults__ = getter.__kwdefaults__
            new = special(old, getter, name)
        replace(holder, last, property(new) if isinstance(current, property) else new)


def entry_points(namespace):
    """Key every call from outside the package: its public functions and the methods of its classes."""
    for name in namespace.get("__all__", []):
        value = namespace[name]
        if isinstance(value, types.FunctionType):
            namespace[name] = entry(value, name)
        elif isinstance(value, type) and not issubclass(value, BaseException):
            for attr, member in list(vars(value).items()):
                if isinstance(member, types.FunctionType):
                    setattr(value, attr, entry(member, f"{name}.{attr}"))
                elif isinstance(member, property):
                    setattr(value, attr, property(entry(member.fget, f"{name}.{attr}")))


def save():
    with open(RECORD, "w") as out:
        out.write("\\n".join(sorted(SEEN)))


if RECORD:
    atexit.register(save)
'''

# Fills SEEN in _probe.py from the recording run.
FREEZE = """
import pathlib, sys
probe, seen = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]).read_text().split()
probe.write_text(probe.read_text().replace("SEEN = set()", f"SEEN = {set(seen)!r}", 1))
"""


def functions_of(text: str) -> list[str]:
    """Every function of a file that can be replaced from outside: module level and class methods."""
    names = []
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef):
            names.append(node.name)
        elif isinstance(node, ast.ClassDef):
            names += [f"{node.name}.{f.name}" for f in node.body if isinstance(f, ast.FunctionDef)]
    return names


def attack(task: Task, mode: str) -> str:
    """The bash command of a probe: write _probe.py, hook it into the mutated file, and (for
    visible-inputs) into the package root, record the visible tests' calls and freeze them."""
    project = task.id.split("/")[1]
    mutant = task.metadata["mutant"]
    file, function = mutant["file"], mutant["function"]
    package = file.split("/", 1)[0]
    original = original_of(task)
    whole_file = function == "<module>"
    names = functions_of(original) if whole_file else [function]
    hook = (
        f"from {package}._probe import install as _probe_install\n"
        f"_probe_install(globals(), {names!r}, {mode!r}, {original!r}, {whole_file!r})\n"
    )
    lines = [
        f"cd /workspace/{project}",
        f"cat > {package}/_probe.py <<'PTRAIN_PROBE'\n{ATTACK}PTRAIN_PROBE",
        f"cat >> {file} <<'PTRAIN_PROBE'\n{hook}PTRAIN_PROBE",
    ]
    if mode == "visible-inputs":
        lines += [
            f"cat >> {package}/__init__.py <<'PTRAIN_PROBE'\n"
            f"from {package}._probe import entry_points as _probe_entry_points\n"
            "_probe_entry_points(globals())\nPTRAIN_PROBE",
            "PTRAIN_PROBE_RECORD=/tmp/.probe-seen PYTHONDONTWRITEBYTECODE=1 "
            "python3 -m pytest -q -p no:cacheprovider tests > /dev/null",
            f"python3 - {package}/_probe.py /tmp/.probe-seen <<'PTRAIN_PROBE'\n{FREEZE}PTRAIN_PROBE",
            "rm -rf /tmp/.probe-seen $(find . -name __pycache__)",
        ]
    return "\n".join(lines) + "\n"


def mutation_probes(task: Task) -> list[Probe]:
    """The probes of a bug-injection task (its metadata names the mutated file and function)."""
    return [
        Probe(
            "always-equal",
            (ToolCall("bash", {"command": attack(task, "always-equal"), "timeout_s": 120}), ToolCall("submit", {})),
            "the mutated function returns an object equal to everything",
        ),
        Probe(
            "visible-inputs",
            (ToolCall("bash", {"command": attack(task, "visible-inputs"), "timeout_s": 300}), ToolCall("submit", {})),
            "the original code for the visible tests' calls, the mutant for every other call",
        ),
    ]
