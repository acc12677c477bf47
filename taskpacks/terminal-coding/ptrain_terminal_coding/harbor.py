"""Harbor and Terminal-Bench tasks, imported into terminal-coding so they run offline in ptrain's sandboxes.

Two layouts are read. Harbor: `task.toml` ([metadata], [verifier], [agent], [environment]),
`instruction.md`, `environment/Dockerfile` (+ build context), `tests/test.sh`, `solution/solve.sh`.
Terminal-Bench: `task.yaml`, `Dockerfile` (the task directory is its context), `run-tests.sh`,
`tests/`, `solution.sh`. Each task becomes a self-contained directory under the import root:

    instruction.md     what the model is asked to do
    environment/       the build context; `Containerfile` is the task's Dockerfile converted
    tests/             the converted test script and its files (they enter only at verification)
    solution/          the reference solution, if any
    ptrain-import.json what the verifier needs, and what the import mapped and replaced

Registries can't be reached here, so the Dockerfile's FROM (Debian, Ubuntu or python images) is
replaced by terminal-coding's own Containerfile (ptrain's Debian base plus python3-pytest and the usual
tools; podman reuses that image's layers, so the build takes seconds) and its other steps are kept,
run as root, then the WORKDIR is handed to the sandbox user (1000). Tests must run offline: lines that
install uv, pip packages or apt packages at test time are dropped, `uvx ... pytest` and `uv run pytest`
become the image's pytest, and /tests and /logs (the root filesystem is read-only in a sandbox) move
to a directory under /tmp whose name the workspace can't guess. The reward is what the tests write to
logs/verifier/reward.txt or reward.json, else the test script's exit code.
"""

from __future__ import annotations

import base64
import json
import math
import os
import re
import shlex
import shutil
import tomllib
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from ptrain.errors import ConfigError, SandboxError, ToolError, VerifierError
from ptrain.sandbox import runtime
from ptrain.sandbox.container import Sandbox
from ptrain.sandbox.images import ImageSpec
from ptrain.taskpack import Task, Verdict, place_files, split_of
from ptrain_terminal_coding.written import read_tree

PROLOGUE = Path(__file__).parent / "image" / "Containerfile"
META = "ptrain-import.json"
VERIFY_ROOT = "/tmp/ptrain-verify"  # converted tests use this; verification swaps in a random name
SOLUTION_ROOT = "/tmp/ptrain-solution"  # where gold unpacks solution/ (Harbor's /solution)
DEFAULT_WORKDIR = "/app"
DEFAULT_TIMEOUT_S = 120.0
MAX_TIMEOUT_S = 270.0  # ptrain.verify gives a verdict 300 s in all
MAPPABLE = re.compile(r"(^|/)(python|debian|ubuntu|buildpack-deps)([:@-]|$)")
DROPPED = {"CMD", "ENTRYPOINT", "EXPOSE", "HEALTHCHECK", "VOLUME", "STOPSIGNAL", "ONBUILD", "MAINTAINER"}
TB_NOT_CONTEXT = {"task.yaml", "run-tests.sh", "solution.sh", "solution.yaml", "tests", "Dockerfile",
                  "docker-compose.yaml", "docker-compose.yml"}  # fmt: skip


@dataclass
class ImportResult:
    """One task's import: where it went and what was changed, or why it could not be converted."""

    name: str
    layout: str  # "harbor" | "terminal-bench"
    source: Path
    dest: Path | None = None
    base: str = ""  # the Dockerfile's FROM
    workdir: str = ""
    env: dict[str, str] = field(default_factory=dict)  # the Dockerfile's ENV (the sandbox shell starts clean)
    notes: list[str] = field(default_factory=list)  # mapped / replaced / dropped, one line each
    warnings: list[str] = field(default_factory=list)  # changes that may make the task fail here
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error


def import_dir() -> Path:
    return Path(os.environ.get("PTRAIN_IMPORT_DIR") or runtime.home() / "imported" / "terminal-coding")


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "task"


def difficulty_of(value: object) -> str:
    text = str(value or "").lower()
    if any(word in text for word in ("hard", "expert", "difficult")):
        return "hard"
    return "easy" if any(word in text for word in ("easy", "trivial", "beginner", "simple")) else "medium"


def find_tasks(src: Path) -> list[tuple[Path, str]]:
    """Task directories under `src` (or `src` itself), with their layout; not looking inside a task."""
    if (src / "task.toml").is_file():
        return [(src, "harbor")]
    if (src / "task.yaml").is_file():
        return [(src, "terminal-bench")]
    found = []
    for child in sorted(p for p in src.iterdir() if p.is_dir() and not p.name.startswith(".")):
        found += find_tasks(child)
    return found


# ---------------------------------------------------------------- shell scripts


def logical_lines(text: str) -> list[tuple[list[str], str]]:
    """Physical lines grouped into commands (backslash continuations joined); heredoc bodies pass as-is."""
    lines, out, i = text.splitlines(), [], 0
    while i < len(lines):
        group = [lines[i]]
        while group[-1].endswith("\\") and i + 1 < len(lines):
            i += 1
            group.append(lines[i])
        i += 1
        joined = " ".join(part[:-1].strip() if part.endswith("\\") else part.strip() for part in group)
        out.append((group, joined))
        heredoc = re.search(r"(?<!<)<<-?(?!<)\s*['\"]?([A-Za-z_]\w*)['\"]?", joined)
        if heredoc:
            body = []
            while i < len(lines) and lines[i].strip() != heredoc.group(1):
                body.append(lines[i])
                i += 1
            body += lines[i : i + 1]
            i += 1
            out += [([line], "") for line in body]
    return out


def split_commands(line: str) -> list[str]:
    """`line` split into commands and the separators (&&, ||, ;) between them, outside quotes."""
    parts, start, quote, depth, i = [], 0, "", 0, 0
    while i < len(line):
        c = line[i]
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif line.startswith("$(", i):
            depth += 1
        elif c == ")" and depth:
            depth -= 1
        elif c == "#" and (i == 0 or line[i - 1].isspace()) and not depth:
            return parts + [line[start:i]]  # a trailing comment
        elif not depth and (line.startswith("&&", i) or line.startswith("||", i) or c == ";"):
            sep = line[i : i + (1 if c == ";" else 2)]
            parts += [line[start:i], sep]
            i += len(sep)
            start = i
            continue
        i += 1
    return parts + [line[start:]]


KEYWORD = re.compile(r"^\s*(?:(?:then|do|else|elif|if|while|until|!|\{|\()\s+)*")
INSTALLS = [  # commands that fetch or install at test time: apt, curl/wget, pip, uv setup, uv's env
    re.compile(r"^(sudo\s+)?(apt-get|apt|apk|yum|dnf)\s.*\b(update|install|add|upgrade)\b"),
    re.compile(r"^(sudo\s+)?(curl|wget)\s"),
    re.compile(r"^(sudo\s+)?(python3?\s+-m\s+)?(pip3?|uv\s+pip|uv\s+tool)\s+install\b"),
    re.compile(r"^uv\s+(init|add|venv|sync|python\s+install)\b"),
    re.compile(r"^(source|\.)\s+\S*(\.local/bin/env|\.cargo/env|/bin/activate)\b"),
]
UV_VALUE_OPTS = r"-p|--python|-w|--with|--from|--with-requirements|--index-url|--extra-index-url"
UV_OPTS = rf"(?:\s+(?:{UV_VALUE_OPTS})(?:=|\s+)\S+|\s+--(?:isolated|no-project|quiet|offline|frozen)|\s+-q)*"
PYTEST_RUNNERS = re.compile(rf"\b(?:uvx{UV_OPTS}|uv\s+run{UV_OPTS})\s+(?:python3?\s+-m\s+)?pytest\b")
UV_PYTHON = re.compile(rf"\buv\s+run{UV_OPTS}\s+python3?\b")
PIP_BUILD = re.compile(r"\b(pip3?|uv|uvx)\s+(install|add|sync|pip)\b")
CTRF = re.compile(r"\s--ctrf(?:=|\s+)\S+")
REPLACEMENTS = ((PYTEST_RUNNERS, "python3 -P -m pytest"), (UV_PYTHON, "python3"), (CTRF, ""))
PYTEST_FAILED = re.compile(r"^=+ .*\b\d+ (failed|errors?)\b.* =+$", re.MULTILINE)
REQUIREMENTS = re.compile(r"(?:-r|--requirements?)(?:=|\s+)(\S+)")
PACKAGE_FLAGS = re.compile(r"(?:-w|--with)(?:=|\s+)(\S+)")
PATHS = {"/tests": f"{VERIFY_ROOT}/tests", "/logs": f"{VERIFY_ROOT}/logs", "/solution": SOLUTION_ROOT}


def extra_packages(command: str) -> list[str]:
    """What a test-time pip/uv install asked for besides pytest (it must come from the image instead)."""
    names = [re.split(r"[<>=!~\[]", w.strip("'\""))[0] for w in PACKAGE_FLAGS.findall(command)]
    install = re.search(r"\b(?:pip3?|uv\s+pip|uv\s+tool|uv)\s+(?:install|add)\b(.*)", command)
    if install:
        names += [f"the packages in {path}" for path in REQUIREMENTS.findall(install.group(1))]
        args = REQUIREMENTS.sub("", install.group(1)).split()
        names += [re.split(r"[<>=!~\[]", w.strip("'\""))[0] for w in args if not w.startswith("-")]
    return [n for n in names if n and n not in ("pytest", "pytest-json-ctrf") and not n.startswith(("$", "/", "."))]


def rewrite_paths(text: str, roots: dict[str, str] = PATHS) -> str:
    for old, new in roots.items():
        text = re.sub(rf"(?<![\w.$/}})-]){re.escape(old)}(?![\w.-])", new, text)
    return text


def convert_script(text: str, where: str, result: ImportResult) -> str:
    """A test or solution script with test-time installs dropped and uv's pytest replaced by the image's."""
    out, dropped, replaced, extra = [], [], {}, []
    for group, line in logical_lines(text):
        parts = split_commands(line) if line.strip() and not line.lstrip().startswith("#") else []
        changed = False
        for k in range(0, len(parts), 2):
            prefix = KEYWORD.match(parts[k]).group(0)
            command = parts[k][len(prefix) :].strip()
            if any(pattern.match(command) for pattern in INSTALLS):
                dropped.append(shorten(command, 40))
                extra += extra_packages(command)
                parts[k], changed = prefix + "true" + parts[k][len(parts[k].rstrip()) :], True
                continue
            new = command
            for pattern, to in REPLACEMENTS:
                for match in pattern.finditer(new):
                    replaced[shorten(match.group(0).strip(), 40)] = to
                new = pattern.sub(to, new)
            if new != command:
                extra += extra_packages(command)
                parts[k], changed = parts[k].replace(command, new), True
        out += ["".join(parts).rstrip() + f"  # ptrain: was `{shorten(line, 200)}`"] if changed else group
    if dropped:
        result.notes.append(f"{where}: dropped test-time installs: {'; '.join(dropped)}")
    for old, new in replaced.items():
        result.notes.append(f"{where}: `{old}` → " + (f"`{new}`" if new else "removed (its plugin is not here)"))
    if extra:
        result.warnings.append(f"{where}: {', '.join(dict.fromkeys(extra))} must already be in the image")
    converted = "\n".join(out) + "\n"
    moved = rewrite_paths(converted)
    if moved != converted:
        result.notes.append(f"{where}: moved {moved_roots(converted)} under /tmp (the root filesystem is read-only)")
    return moved


def moved_roots(text: str) -> str:
    return ", ".join(old for old in PATHS if rewrite_paths(text, {old: PATHS[old]}) != text)


def shorten(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


# ---------------------------------------------------------------- Dockerfiles


def convert_dockerfile(text: str, context: Path, result: ImportResult) -> str:
    """The task's Dockerfile on terminal-coding's image: FROM mapped, other steps kept, workdir owned by 1000."""
    steps, workdir, froms, env = [], "/", [], {}
    for group, line in logical_lines(text):
        word, _, rest = line.strip().partition(" ")
        word = word.upper()
        if not line.strip() or line.lstrip().startswith("#"):
            steps += group
        elif word == "FROM":
            froms.append(next((w for w in rest.split() if not w.startswith("--")), ""))
        elif not froms:
            result.notes.append(f"Dockerfile: dropped `{shorten(line, 40)}` (before FROM)")
        elif word in DROPPED:
            result.notes.append(f"Dockerfile: dropped `{shorten(line, 40)}` (not used in a sandbox)")
        else:
            if word == "WORKDIR":
                workdir = os.path.normpath(os.path.join(workdir, rest.strip().strip("\"'")))
            elif word == "ENV":
                env.update(env_of(rest))
            elif word in ("COPY", "ADD"):
                check_copy(rest, context)
            elif word == "RUN" and PIP_BUILD.search(rest) and "--no-index" not in rest:
                raise ConfigError(
                    f"`{shorten(line)}` needs PyPI, which image builds here cannot reach",
                    fix="install Debian python3-* packages with apt-get, or wheels with pip --no-index",
                )
            if word == "RUN" and re.search(r"\b(curl|wget)\b", rest):
                result.warnings.append(f"Dockerfile: `{shorten(line)}` downloads at build time; it may fail here")
            steps += group
    if len(froms) != 1:
        raise ConfigError(f"the Dockerfile has {len(froms)} FROM lines; one stage is supported")
    if not MAPPABLE.search(froms[0]):
        raise ConfigError(f"base image {froms[0]!r} can't be mapped: only Debian, Ubuntu and python images can")
    result.base = froms[0]
    result.workdir = workdir if workdir != "/" else DEFAULT_WORKDIR
    result.env = env
    w = shlex.quote(result.workdir)
    return "\n".join([
        f"# Converted by ptrain from {result.layout} task {result.name!r}: see ../{META}",
        PROLOGUE.read_text().rstrip(),
        f"# ---- {result.name}: its Dockerfile, FROM {froms[0]} mapped onto the image above ----",
        "USER root",
        "WORKDIR /",
        "RUN [ -e /usr/bin/python ] || ln -s python3 /usr/bin/python",
        *steps,
        "# ---- ptrain: the sandbox user owns the workdir (a writable tmpfs at run time) ----",
        "USER root",
        f"RUN mkdir -p {w} && chown -R 1000:1000 {w}",
        f"WORKDIR {result.workdir}",
        "USER 1000:1000",
        "",
    ])  # fmt: skip


def env_of(rest: str) -> dict[str, str]:
    """`ENV K=V K2="V 2"` or the old `ENV K V`."""
    words = shlex.split(rest)
    if words and "=" not in words[0]:
        return {words[0]: rest.strip()[len(words[0]) :].strip()}
    return dict(w.split("=", 1) for w in words if "=" in w)


def exports(env: dict[str, str]) -> str:
    """Shell lines that set the image's ENV in the sandbox shell ($VARS expand, as Docker expands them)."""
    quote = lambda v: '"' + re.sub(r'(["\\`])', r"\\\1", v) + '"'  # noqa: E731
    return "\n".join(f"export {k}={quote(v)}" for k, v in env.items() if re.fullmatch(r"[A-Za-z_]\w*", k))


def check_copy(rest: str, context: Path) -> None:
    args = [a for a in shlex.split(rest) if not a.startswith("--")]
    if any(a.startswith("--from") for a in shlex.split(rest)):
        raise ConfigError("COPY --from needs another stage; one stage is supported")
    if args and args[0].startswith("["):
        args = json.loads(rest[rest.index("[") :])
    for source in args[:-1]:
        pattern = source.strip("/").removeprefix("./")
        if pattern in ("", ".") or "$" in pattern or re.match(r"https?://", source):
            continue
        if not list(context.glob(pattern)):
            raise ConfigError(
                f"COPY/ADD source {source!r} is not in the build context",
                fix="tests and solutions are kept out of the image; they enter only at verification",
            )


# ---------------------------------------------------------------- import


def import_tasks(src: Path, dest: Path) -> list[ImportResult]:
    """Convert every task under `src` into `dest/<name>/`; a task that can't be converted is an error
    in its result (naming it and what is wrong) and the others are still imported."""
    if not src.is_dir():
        raise ConfigError(f"{src} is not a directory", fix="give a Harbor or Terminal-Bench task directory")
    found = find_tasks(src)
    if not found:
        raise ConfigError(f"no task.toml (Harbor) or task.yaml (Terminal-Bench) under {src}")
    dest.mkdir(parents=True, exist_ok=True)
    results, seen = [], set()
    for folder, layout in found:
        result = ImportResult(slug(folder.name), layout, folder)
        try:
            if result.name in seen:
                raise ConfigError(f"another task under {src} is also named {result.name!r}")
            seen.add(result.name)
            convert(folder, dest / result.name, result)
        except (ConfigError, OSError, ValueError, KeyError, TypeError) as e:  # TOML and YAML errors are ValueErrors
            result.error = f"task {result.name!r} ({folder}): {e}"
        results.append(result)
    return results


def convert(folder: Path, out: Path, result: ImportResult) -> None:
    """Write the converted task to a temporary directory, then put it in place of any older import."""
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex[:8]}")
    try:
        meta = (read_harbor if result.layout == "harbor" else read_terminal_bench)(folder, tmp, result)
        meta.update(name=result.name, layout=result.layout, source=str(folder.resolve()), base=result.base)
        meta.update(workdir=result.workdir, image_env=result.env, notes=result.notes, warnings=result.warnings)
        (tmp / META).write_text(json.dumps(meta, indent=2) + "\n")
        shutil.rmtree(out, ignore_errors=True)
        tmp.rename(out)
        result.dest = out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def copy_context(src: Path, out: Path, skip: set[str]) -> None:
    shutil.copytree(src, out, symlinks=True, ignore=lambda d, names: [n for n in names if Path(d) == src and n in skip])


def read_harbor(folder: Path, out: Path, result: ImportResult) -> dict:
    spec = tomllib.loads((folder / "task.toml").read_text())
    for name in ("instruction.md", "tests/test.sh"):
        if not (folder / name).is_file():
            raise ConfigError(f"no {name} (a Harbor task needs instruction.md and tests/test.sh)")
    env_dir = folder / "environment"
    dockerfile = env_dir / "Dockerfile"
    image = spec.get("environment", {}).get("docker_image")
    if not dockerfile.is_file() and not image:
        raise ConfigError("no environment/Dockerfile and no [environment] docker_image")
    if (env_dir / "docker-compose.yaml").is_file():
        result.warnings.append("environment/docker-compose.yaml ignored: one container per task here")
    if env_dir.is_dir():
        copy_context(env_dir, out / "environment", {"Dockerfile", "docker-compose.yaml"})
    else:
        (out / "environment").mkdir(parents=True)
    text = dockerfile.read_text() if dockerfile.is_file() else f"FROM {image}\n"
    (out / "environment" / "Containerfile").write_text(convert_dockerfile(text, out / "environment", result))
    (out / "instruction.md").write_text(strip_canary((folder / "instruction.md").read_text()))
    copy_tests(folder / "tests", out / "tests", "test.sh", result)
    if (folder / "solution" / "solve.sh").is_file():
        copy_tests(folder / "solution", out / "solution", "solve.sh", result)
    meta = spec.get("metadata", {})
    verifier = spec.get("verifier", {})
    return {
        "category": meta.get("category") or "imported",
        "difficulty": difficulty_of(meta.get("difficulty")),
        "tags": list(meta.get("tags", [])),
        "test_script": "test.sh",
        "solution_script": "solve.sh" if (out / "solution").is_dir() else None,
        "timeout_s": timeout(verifier.get("timeout_sec"), result),
        "agent_timeout_s": float(spec.get("agent", {}).get("timeout_sec", 0)) or None,
        "env": {k: str(v) for k, v in verifier.get("env", {}).items()},
    }


def read_terminal_bench(folder: Path, out: Path, result: ImportResult) -> dict:
    import yaml  # a dependency of transformers; only Terminal-Bench tasks need it

    try:
        spec = yaml.safe_load((folder / "task.yaml").read_text()) or {}
    except yaml.YAMLError as e:
        raise ConfigError(f"bad task.yaml: {e}") from e
    instruction = spec.get("instruction") or next(
        (d.get("description") for d in spec.get("descriptions", []) if d.get("key") == "base"), None
    )
    if not instruction:
        raise ConfigError("task.yaml has no instruction")
    if not (folder / "Dockerfile").is_file():
        raise ConfigError("no Dockerfile (docker-compose-only tasks are not supported)")
    if (folder / "docker-compose.yaml").is_file():
        result.notes.append("docker-compose.yaml ignored: one container per task here")
    copy_context(folder, out / "environment", TB_NOT_CONTEXT)
    containerfile = convert_dockerfile((folder / "Dockerfile").read_text(), out / "environment", result)
    (out / "environment" / "Containerfile").write_text(containerfile)
    (out / "instruction.md").write_text(instruction.strip() + "\n")
    script = folder / "run-tests.sh"
    if script.is_file():
        copy_tests(folder / "tests", out / "tests", None, result)
        (out / "tests" / "run-tests.sh").write_text(convert_script(script.read_text(), "run-tests.sh", result))
    elif (folder / "tests" / "test_outputs.py").is_file():
        copy_tests(folder / "tests", out / "tests", None, result)
        (out / "tests" / "run-tests.sh").write_text("#!/bin/bash\npytest $TEST_DIR/test_outputs.py -rA\n")
        result.notes.append("no run-tests.sh: runs pytest on tests/test_outputs.py, as Terminal-Bench does")
    else:
        raise ConfigError("no run-tests.sh and no tests/test_outputs.py")
    if (folder / "solution.sh").is_file():
        (out / "solution").mkdir()
        solution = convert_script((folder / "solution.sh").read_text(), "solution.sh", result)
        (out / "solution" / "solve.sh").write_text(solution)
    elif (folder / "solution.yaml").is_file():
        result.warnings.append("solution.yaml (keystrokes for tmux) is not imported: the task has no gold")
    return {
        "category": spec.get("category") or "imported",
        "difficulty": difficulty_of(spec.get("difficulty")),
        "tags": list(spec.get("tags") or []),
        "test_script": "run-tests.sh",
        "solution_script": "solve.sh" if (out / "solution").is_dir() else None,
        "timeout_s": timeout(spec.get("max_test_timeout_sec"), result),
        "agent_timeout_s": float(spec.get("max_agent_timeout_sec") or 0) or None,
        "env": {},
        "parser": spec.get("parser_name", "pytest"),  # Terminal-Bench scores by parsing pytest's summary
    }


def copy_tests(src: Path, out: Path, script: str | None, result: ImportResult) -> None:
    """Copy a tests/ or solution/ folder: `script` converted, /tests and /logs in the other text files moved."""
    out.mkdir(parents=True)
    for rel, data in read_tree(src).items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if rel == script:
            target.write_text(convert_script(data.decode(), f"{src.name}/{rel}", result))
            continue
        try:
            text = data.decode()
        except UnicodeDecodeError:
            target.write_bytes(data)
            continue
        moved = rewrite_paths(text)
        if moved != text:
            result.notes.append(f"{src.name}/{rel}: moved {moved_roots(text)} under /tmp")
        target.write_text(moved)


def timeout(value: object, result: ImportResult) -> float:
    wanted = float(value or DEFAULT_TIMEOUT_S)
    if wanted > MAX_TIMEOUT_S:
        result.warnings.append(f"verifier timeout {wanted:g} s capped to {MAX_TIMEOUT_S:g} s")
    return min(wanted, MAX_TIMEOUT_S)


def strip_canary(text: str) -> str:
    lines = text.splitlines()
    while lines and ("canary" in lines[0].lower() or not lines[0].strip()):
        lines.pop(0)
    return "\n".join(lines).strip() + "\n"


# ---------------------------------------------------------------- tasks and verification


def load_imported(root: Path) -> list[Task]:
    """Tasks from the converted directories under `root` (none if it does not exist)."""
    if not root.is_dir():
        return []
    return [load_one(meta.parent) for meta in sorted(root.glob(f"*/{META}"))]


def load_one(folder: Path) -> Task:
    try:
        meta = json.loads((folder / META).read_text())
        task_id = f"imported/{meta['name']}"
        return Task(
            id=task_id,
            instruction=(folder / "instruction.md").read_text().strip(),
            category=meta["category"],
            difficulty=meta["difficulty"],
            split=split_of(task_id),
            setup=exports(meta.get("image_env", {})),
            image=ImageSpec(name=f"imported-{meta['name']}", context=folder / "environment", workdir=meta["workdir"]),
            metadata={
                "verifier": "harbor",
                "layout": meta["layout"],
                "tests": read_tree(folder / "tests"),
                "test_script": meta["test_script"],
                "solution": gold_command(folder / "solution", meta["solution_script"], meta["workdir"]),
                "timeout_s": float(meta["timeout_s"]),
                "agent_timeout_s": meta.get("agent_timeout_s"),
                "env": dict(meta.get("env", {})),
                "parser": meta.get("parser"),
                "workdir": meta["workdir"],
                "tags": meta.get("tags", []),
            },
        )
    except (OSError, ValueError, KeyError) as e:
        raise ConfigError(
            f"imported task {folder} is broken: {type(e).__name__}: {e}",
            fix=f"re-run `ptrain taskpacks import-harbor` on its source, or delete {folder}",
        ) from e


def gold_command(solution: Path, script: str | None, workdir: str) -> str | None:
    """One bash command that writes solution/ where Harbor's /solution was moved, then runs the script."""
    if not script:
        return None
    lines = [f"rm -rf {SOLUTION_ROOT} && mkdir -p {SOLUTION_ROOT}"]
    for rel, data in read_tree(solution).items():
        path = shlex.quote(f"{SOLUTION_ROOT}/{rel}")
        if "/" in rel:
            lines.append(f"mkdir -p $(dirname {path})")
        try:
            text = data.decode()
            if "PTRAIN_EOF" in text:
                raise ValueError("the heredoc marker is in the file")
            lines.append(f"cat > {path} <<'PTRAIN_EOF'\n{text.rstrip(chr(10))}\nPTRAIN_EOF")
        except ValueError:  # binary (UnicodeDecodeError is one)
            lines.append(f"echo {base64.b64encode(data).decode()} | base64 -d > {path}")
    lines.append(f"cd {shlex.quote(workdir)} && bash {SOLUTION_ROOT}/{script}")
    return "\n".join(lines)


async def verify_imported(task: Task, artifact: bytes, sandbox: Sandbox, version: str) -> Verdict:
    """Restore the workspace, only then bring the tests in, run the converted script; read the reward."""
    meta = task.metadata
    workdir = meta["workdir"]
    cleared = await sandbox.exec(f"find {shlex.quote(workdir)} -mindepth 1 -delete", timeout_s=60)
    if not cleared.ok:  # the image's files are in the fresh workdir: clear them so deletions count too
        raise SandboxError(f"could not clear {workdir} before restoring task {task.id}: {cleared.output[-500:]}")
    await sandbox.put_tar(workdir, artifact)
    root = f"/tmp/.verify-{uuid.uuid4().hex}"
    tests = {}
    for rel, data in meta["tests"].items():
        try:
            tests[rel] = data.decode().replace(VERIFY_ROOT, root).encode()
        except UnicodeDecodeError:
            tests[rel] = data
    await place_files(sandbox, tests, root=f"{root}/tests")
    env = {"TEST_DIR": f"{root}/tests", "T_BENCH_TEST_DIR": f"{root}/tests", **meta["env"]}
    assignments = " ".join(f"{k}={shlex.quote(v.replace(VERIFY_ROOT, root))}" for k, v in env.items())
    command = (
        f"{task.setup}\nmkdir -p {root}/logs/verifier {root}/logs/agent && cd {shlex.quote(workdir)} && "
        f"env {assignments} bash {root}/tests/{meta['test_script']} 2>&1"
    )
    result = await sandbox.exec(command, timeout_s=meta["timeout_s"], max_output_bytes=8192)
    details: dict = {"exit_code": result.exit_code, "output": result.output[-4000:]}
    reward = await read_reward(sandbox, f"{root}/logs/verifier", task, details)
    if reward is None:
        reward, details["reward_from"] = (1.0 if result.ok else 0.0), "exit code"
        if meta.get("parser") == "pytest" and PYTEST_FAILED.search(result.output[-2000:]):
            reward, details["reward_from"] = 0.0, "exit code and pytest's summary"  # `pytest ... || true` is no pass
    if result.timed_out:
        reward, details["error"] = 0.0, f"tests timed out after {meta['timeout_s']:g} s"
    return Verdict(reward=reward, passed=reward >= 1.0, details=details, verifier_version=version)


async def read_reward(sandbox: Sandbox, logs: str, task: Task, details: dict) -> float | None:
    for name in ("reward.txt", "reward.json"):
        try:
            raw = (await sandbox.read_file(f"{logs}/{name}", max_bytes=65536)).decode(errors="replace").strip()
        except ToolError:
            continue
        try:
            if name == "reward.txt":
                value = float(raw)
            else:
                data = details["rewards"] = json.loads(raw)
                numbers = [v for v in data.values() if isinstance(v, int | float)] if isinstance(data, dict) else []
                value = float(data["reward"] if isinstance(data, dict) and "reward" in data else
                              sum(numbers) / len(numbers) if numbers else data)  # fmt: skip
        except (ValueError, TypeError, KeyError) as e:
            raise VerifierError(f"task {task.id} wrote an unreadable {name}: {raw[:200]!r} ({e})") from e
        if not math.isfinite(value):
            raise VerifierError(f"task {task.id} wrote a reward that is not a number to {name}: {raw[:200]!r}")
        details["reward_from"] = name
        return min(max(value, 0.0), 1.0)
    return None
