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

Registries can't be reached here, so the Dockerfile's FROM (Debian, Ubuntu, python, Go, JDK, GCC or
Node images) is replaced by terminal-coding's own Containerfile (ptrain's Debian base plus python3-pytest
and the usual tools; podman reuses that image's layers, so the build takes seconds), plus the Debian
packages that stand in for the base (Debian's Go, OpenJDK, Node), and its other steps are kept,
run as root, then the WORKDIR is handed to the sandbox user (1000). Python packages, the build's and
the tests' (`pip install`, `uvx --with pytest==8.4.1`, uv itself), come from wheels the host fetches
once, pinned and cached, and install offline; the Kotlin compiler's zip from JetBrains comes from
npm's identical `kotlin-compiler` package; any other download at build time (`git clone`, `curl`
of a URL) is refused at import. Tests must run offline: lines that install uv, pip packages or apt
packages at test time are dropped (their Python packages are already in the image), `uvx ... pytest`
and `uv run pytest` become the image's pytest, and /tests and /logs (the root filesystem is read-only
in a sandbox) move under /tmp. task.toml's cpus, memory_mb and storage_mb become the sandbox's limits,
build_timeout_sec the build's, and the verifier's timeout is capped (PTRAIN_HARBOR_TEST_TIMEOUT_CAP_S).
Verification runs the test script sealed (root's harness in a directory the sandbox user can't list, every process dead before the reward is read, pytest's outcomes on a private pipe) and
reads the reward as Harbor does: `reward.json`'s `reward` key, else `reward.txt`, else 0 with the
reason (the exit code only for the Terminal-Bench 1 layout); when pytest ran, the reward must agree
with what it reported.

    imported.py    where imports live, ImportResult, and the names conversion and loading share
    spec.py        task.toml: timeouts, resources, environments used; every other field a warning
    shell.py       test and solution scripts: test-time installs dropped, uv's pytest replaced, paths moved
    offline.py     what commands fetch: Python requirements, uv's installer, downloads that can't work here
    bases.py       which FROM images map, and the Debian packages (a pinned suite for Go) and ENV for each
    wheels.py      those requirements as wheels: pip download on the host, pinned, cached
    substitutes.py downloads a registry holds unchanged (JetBrains' Kotlin compiler: npm's kotlin-compiler)
    runlines.py    RUN lines rewritten: heredocs as scripts from the context, exact apt pins dropped
    dockerfile.py  the Dockerfile as a Containerfile on terminal-coding's image
    convert.py     import_tasks(): find tasks of either layout and write each converted directory
    tasks.py       load_imported() turns those directories into Tasks
    verify.py      verify_imported(): the harness, the sealed run, Harbor's reward
    seal.py        the pytest plugin that reports outcomes and a hidden canary, and agree() on the reward
"""

from ptrain_terminal_coding.harbor.convert import import_tasks
from ptrain_terminal_coding.harbor.imported import ImportResult, import_dir
from ptrain_terminal_coding.harbor.tasks import load_imported
from ptrain_terminal_coding.harbor.verify import verify_imported

__all__ = ["ImportResult", "import_dir", "import_tasks", "load_imported", "verify_imported"]
