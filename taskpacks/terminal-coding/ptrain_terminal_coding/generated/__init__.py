"""Generated tasks: an easy tier of one-command shell chores, many instances of each ("shell-basics").

A family is a template over random parameters (file names, words, numbers, line counts, delimiters):
count the lines of a file, sort it, cut a column out of a CSV, replace a word with sed... Instance
`i` of family `f` draws its parameters from `random.Random("shell-basics/f/i")`, so every build gives
the same tasks on every machine, and its id `shell-basics/<family>/<i:05d>` picks its split through
`split_of`, so held-out instances of every family measure what training on the others taught.

Each instance is an ordinary Task: its input files go into /workspace, its hidden pytest file checks
the exact expected output (a trailing newline either way), and its gold solution is one short bash
command, short enough to serve as a demonstration in a small model's turn. Inputs stay small (a few
short lines) so that prompts stay short too. Building every instance runs nothing and takes
milliseconds.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable

from ptrain.taskpack import Task, split_of
from ptrain_terminal_coding.generated.columns import change_case, count_matches, csv_column, grep_lines, replace_word
from ptrain_terminal_coding.generated.files import (
    copy_file,
    count_files,
    delete_files,
    make_tree,
    move_file,
    sum_column,
    sum_numbers,
)
from ptrain_terminal_coding.generated.lines import (
    append_line,
    count_lines,
    count_words,
    head_lines,
    nth_line,
    reverse_lines,
    sort_numbers,
    sort_words,
    tail_lines,
    unique_lines,
    write_text,
)
from ptrain_terminal_coding.generated.spec import CATEGORY, MAX_SOLUTION_CHARS, PER_FAMILY, Spec, W, test_source

__all__ = ["CATEGORY", "FAMILIES", "MAX_SOLUTION_CHARS", "PER_FAMILY", "generate", "generated_tasks"]


FAMILIES: dict[str, Callable[[random.Random], Spec]] = {
    "write-text": write_text,
    "append-line": append_line,
    "count-lines": count_lines,
    "count-words": count_words,
    "sort-words": sort_words,
    "sort-numbers": sort_numbers,
    "unique-lines": unique_lines,
    "head-lines": head_lines,
    "tail-lines": tail_lines,
    "nth-line": nth_line,
    "reverse-lines": reverse_lines,
    "csv-column": csv_column,
    "grep-lines": grep_lines,
    "count-matches": count_matches,
    "replace-word": replace_word,
    "change-case": change_case,
    "make-tree": make_tree,
    "copy-file": copy_file,
    "move-file": move_file,
    "delete-files": delete_files,
    "sum-numbers": sum_numbers,
    "sum-column": sum_column,
    "count-files": count_files,
}


def generate(family: str, index: int) -> Task:
    """Instance `index` of `family`: the same Task on every call and every machine."""
    task_id = f"{CATEGORY}/{family}/{index:05d}"
    spec = FAMILIES[family](random.Random(task_id))
    if len(spec.solution) >= MAX_SOLUTION_CHARS or "\n" in spec.solution:
        raise ValueError(f"{task_id}: the gold command must be one line under {MAX_SOLUTION_CHARS} characters")
    return Task(
        id=task_id,
        instruction=spec.instruction,
        category=CATEGORY,
        difficulty=spec.difficulty,
        split=split_of(task_id),
        files={path: text.encode() for path, text in spec.files.items()},
        metadata={
            "tests": {f"test_{family.replace('-', '_')}.py": test_source(spec.checks).encode()},
            "solution": spec.solution,
            "timeout_s": 60.0,
            "pythonpath": [W],
            "family": family,
            "paths": spec.paths,
        },
    )


@functools.cache
def generated_tasks(per_family: int = PER_FAMILY) -> list[Task]:
    """`per_family` instances of every family, family by family, in a fixed order."""
    return [generate(family, index) for family in FAMILIES for index in range(per_family)]
