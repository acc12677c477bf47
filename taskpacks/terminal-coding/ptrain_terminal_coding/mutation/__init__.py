"""Bug-injection tasks: one small AST mutation of a Python project shipped in `projects/`.

Each `projects/<name>/` is a stdlib-only package with a pytest file the model sees (`tests/`) and
hidden tests it does not (`hidden/`: the visible tests' superset the verifier runs, with fresh
inputs and type-exact checks). Mutation operators are pure
functions of a parsed file that propose edits planting one typical bug: a swapped operator, an
off-by-one, the wrong variable, a dropped condition. An edit replaces one source segment (found
from the nodes' positions), so the rest of the file keeps its formatting and a diff shows one
small change. Enumeration is deterministic: projects, files and operators in sorted order, nodes
in tree order, and a mutant that repeats an earlier program is dropped.

`python -m ptrain_terminal_coding.mutation --build` runs each project's tests against every mutant
and keeps those that make at least one visible test fail, dropping those that survive, hang or break test
collection; it writes `mutants.json`. `mutation_tasks()` reads that manifest, runs nothing, and turns
every kept mutant into a "make the failing tests pass" Task whose gold solution restores the file.

    edits.py        Edit (one replaced segment of a file) and Source (AST positions as text offsets)
    operators.py    the mutation operators, (tree, source) -> edits, by name in OPERATORS
    enumeration.py  the shipped projects and every mutant of them, in a fixed order with stable ids
    build.py        test every mutant in forked test servers, keep the caught ones (`--build`)
    manifest.py     mutants.json: written one mutant per line, read back checked against the projects
    tasks.py        each kept mutant as a Task, split by project; mutation_tasks() is what the taskpack serves
    probes.py       adversarial episodes that must score 0 (always-equal, visible-inputs)
    cli.py          `python -m ptrain_terminal_coding.mutation [--build]` and its summary
"""

from ptrain_terminal_coding.mutation.build import build
from ptrain_terminal_coding.mutation.cli import main, summary
from ptrain_terminal_coding.mutation.edits import Edit, Source, apply_edit
from ptrain_terminal_coding.mutation.enumeration import (
    HIDDEN,
    PROJECTS_DIR,
    Mutant,
    digest,
    enumerate_mutants,
    mutants_of_source,
    read_hidden,
    read_project,
)
from ptrain_terminal_coding.mutation.manifest import MANIFEST, REBUILD, load_manifest, write_manifest
from ptrain_terminal_coding.mutation.operators import OPERATORS
from ptrain_terminal_coding.mutation.probes import mutation_probes
from ptrain_terminal_coding.mutation.tasks import (
    INSTRUCTIONS,
    SPLIT_OF,
    difficulty_of,
    location_of,
    mutation_tasks,
    original_of,
    tasks_from_manifest,
)

__all__ = [
    "HIDDEN",
    "INSTRUCTIONS",
    "MANIFEST",
    "OPERATORS",
    "PROJECTS_DIR",
    "REBUILD",
    "SPLIT_OF",
    "Edit",
    "Mutant",
    "Source",
    "apply_edit",
    "build",
    "difficulty_of",
    "digest",
    "enumerate_mutants",
    "load_manifest",
    "location_of",
    "main",
    "mutants_of_source",
    "mutation_probes",
    "mutation_tasks",
    "original_of",
    "read_hidden",
    "read_project",
    "summary",
    "tasks_from_manifest",
    "write_manifest",
]
