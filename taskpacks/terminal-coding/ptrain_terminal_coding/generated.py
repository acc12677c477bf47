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
from dataclasses import dataclass, field

from ptrain.taskpack import Task, split_of

CATEGORY = "shell-basics"
PER_FAMILY = 80
MAX_SOLUTION_CHARS = 120
W = "/workspace"

_WORDS = """
apple river stone cloud garden window yellow purple orange silver coffee bread honey lemon mango
tiger horse eagle whale otter rabbit monkey spider turtle camel pencil paper table chair lamp
clock mirror bottle basket pillow rocket planet comet meadow forest desert island valley canyon
bridge castle tower market school office doctor farmer pilot sailor driver singer winter summer
autumn spring monday friday morning evening thunder breeze shadow candle violin guitar piano drum
flute cookie butter cheese pepper ginger garlic tomato potato carrot cherry banana melon kiwi
quick lazy happy brave quiet bright gentle proud clever fancy jolly noble rapid sunny windy
"""
# No word is a part of another, so "lines containing X" means the same to grep, grep -w and Python.
WORDS = tuple(w for w in _WORDS.split() if not any(w != o and w in o for o in _WORDS.split()))
NAMES = ("Ana", "Ben", "Chen", "Dara", "Eva", "Farid", "Gita", "Hugo", "Ines", "Jon", "Kai", "Lena", "Mona", "Nils")
CITIES = ("Oslo", "Lima", "Paris", "Rome", "Tokyo", "Cairo", "Quito", "Dakar", "Hanoi", "Bern", "Riga", "Perth")
COLORS = ("red", "blue", "green", "black", "white", "pink", "gray", "teal")
STEMS = (
    "notes",
    "data",
    "items",
    "words",
    "names",
    "fruits",
    "todo",
    "input",
    "records",
    "lines",
    "entries",
    "animals",
    "colors",
    "list",
    "journal",
    "poem",
    "story",
    "memo",
    "draft",
    "log",
    "inventory",
    "report",
)
OUTS = ("out", "result", "answer", "output", "summary", "final", "done", "report_out", "new", "clean")
DIRS = ("docs", "src", "app", "build", "logs", "data", "backup", "archive", "tmp", "assets", "project", "notes")
EXTS = ("txt", "log", "csv", "md", "py", "json", "tmp", "bak")
DELIMITERS = {",": "commas", ";": "semicolons", ":": "colons", "|": "pipe characters (|)", "\t": "tabs"}


@dataclass
class Spec:
    """One instance, before it becomes a Task."""

    instruction: str
    solution: str
    checks: list[str]  # assert statements of the hidden test
    paths: tuple[str, ...]  # the absolute paths the instruction names
    files: dict[str, str] = field(default_factory=dict)  # the workspace, relative paths
    difficulty: str = "easy"


# ---- helpers: names, text, checks ------------------------------------------------------------


def ordinal(n: int) -> str:
    suffix = "th" if n % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def names(rng: random.Random, k: int, pool: tuple[str, ...] = STEMS) -> list[str]:
    return rng.sample(pool, k)


def src_out(rng: random.Random, ext: str = "txt") -> tuple[str, str, str]:
    """(relative input name, absolute input path, absolute output path)."""
    stem = rng.choice(STEMS)
    out = rng.choice([o for o in OUTS if o != stem])
    return f"{stem}.{ext}", f"{W}/{stem}.{ext}", f"{W}/{out}.txt"


def sentence(rng: random.Random, lo: int = 2, hi: int = 6, avoid: tuple[str, ...] = ()) -> str:
    return " ".join(rng.sample([w for w in WORDS if w not in avoid], rng.randint(lo, hi)))


def text_of(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


def pick(rng: random.Random, *templates: str, **values: object) -> str:
    return rng.choice(templates).format(**values)


def file_equals(path: str, expected: str) -> list[str]:
    """The file holds exactly `expected` (a trailing newline either way)."""
    return [
        f"assert Path({path!r}).is_file(), {path + ' does not exist'!r}",
        f"assert Path({path!r}).read_text().rstrip('\\n') == {expected.rstrip(chr(10))!r}",
    ]


def lines_equal(path: str, lines: list[str]) -> list[str]:
    return file_equals(path, "\n".join(lines))


def number_equals(path: str, value: int) -> list[str]:
    return [
        f"assert Path({path!r}).is_file(), {path + ' does not exist'!r}",
        f"assert Path({path!r}).read_text().strip() == {str(value)!r}",
    ]


def missing(path: str) -> list[str]:
    return [f"assert not Path({path!r}).exists(), {path + ' should be gone'!r}"]


def test_source(checks: list[str]) -> str:
    body = "".join(f"    {check}\n" for check in checks)
    return f"from pathlib import Path\n\n\ndef test_result():\n{body}"


# ---- the families: each (rng) -> Spec --------------------------------------------------------


def write_text(rng: random.Random) -> Spec:
    path = f"{W}/{rng.choice(STEMS + ('greeting', 'hello', 'message'))}.txt"
    text = sentence(rng, 2, 5)
    text = text[0].upper() + text[1:] + rng.choice(("", "."))
    instruction = pick(
        rng,
        "Create the file {path} containing the text: {text}",
        "Write the line `{text}` into a new file {path}.",
        'Put the text "{text}" in the file {path}.',
        path=path,
        text=text,
    )
    return Spec(instruction, f"echo '{text}' > {path}", file_equals(path, text), (path,))


def append_line(rng: random.Random) -> Spec:
    name, path, _ = src_out(rng)
    lines = [sentence(rng) for _ in range(rng.randint(3, 8))]
    line = sentence(rng, 2, 4)
    instruction = pick(
        rng,
        "Append the line `{line}` to the end of {path}.",
        'Add "{line}" as a new last line of {path}, keeping the lines already there.',
        "{path} needs one more line at the end: {line}",
        path=path,
        line=line,
    )
    return Spec(
        instruction, f"echo '{line}' >> {path}", lines_equal(path, lines + [line]), (path,), {name: text_of(lines)}
    )


def count_lines(rng: random.Random) -> Spec:
    name, src, out = src_out(rng)
    lines = [sentence(rng) for _ in range(rng.randint(3, 30))]
    instruction = pick(
        rng,
        "How many lines does {src} have? Write just the number to {out}.",
        "Count the lines in {src} and save the count, as a plain number, to {out}.",
        "Write the number of lines of {src} to {out}.",
        src=src,
        out=out,
    )
    return Spec(
        instruction, f"wc -l < {src} > {out}", number_equals(out, len(lines)), (src, out), {name: text_of(lines)}
    )


def count_words(rng: random.Random) -> Spec:
    name, src, out = src_out(rng)
    lines = [sentence(rng, 1, 6) for _ in range(rng.randint(3, 12))]
    total = sum(len(line.split()) for line in lines)
    instruction = pick(
        rng,
        "How many words are in {src}? Write just the number to {out}.",
        "Count the words in {src} and save the count, as a plain number, to {out}.",
        "Write the total number of words in {src} to {out}.",
        src=src,
        out=out,
    )
    return Spec(instruction, f"wc -w < {src} > {out}", number_equals(out, total), (src, out), {name: text_of(lines)})


def sort_words(rng: random.Random) -> Spec:
    name, src, out = src_out(rng)
    lines = [rng.choice(WORDS) for _ in range(rng.randint(5, 20))]
    desc = rng.random() < 0.5
    instruction = pick(
        rng,
        "Sort the lines of {src} {order} and write the result to {out}.",
        "Write the words of {src}, sorted {order}, to {out} (one per line).",
        order="in reverse alphabetical order (Z to A)" if desc else "alphabetically (A to Z)",
        src=src,
        out=out,
    )
    solution = f"sort {'-r ' if desc else ''}{src} > {out}"
    return Spec(
        instruction, solution, lines_equal(out, sorted(lines, reverse=desc)), (src, out), {name: text_of(lines)}
    )


def sort_numbers(rng: random.Random) -> Spec:
    name, src, out = src_out(rng)
    while True:  # numerically sorted must differ from sorted as text, or plain `sort` would pass
        numbers = [rng.choice((rng.randint(1, 9), rng.randint(10, 99), rng.randint(100, 999))) for _ in range(10)]
        numbers = numbers[: rng.randint(5, 10)]
        if sorted(numbers) != sorted(numbers, key=str):
            break
    desc = rng.random() < 0.5
    instruction = pick(
        rng,
        "Sort the numbers in {src} {order} and write them to {out}, one per line.",
        "{src} has one number per line. Write them to {out} sorted numerically, {order}.",
        order="from largest to smallest" if desc else "from smallest to largest",
        src=src,
        out=out,
    )
    solution = f"sort -{'r' if desc else ''}n {src} > {out}"
    expected = [str(n) for n in sorted(numbers, reverse=desc)]
    return Spec(
        instruction, solution, lines_equal(out, expected), (src, out), {name: text_of([str(n) for n in numbers])}
    )


def unique_lines(rng: random.Random) -> Spec:
    name, src, out = src_out(rng)
    pool = rng.sample(WORDS, rng.randint(3, 7))
    lines = pool + [rng.choice(pool) for _ in range(rng.randint(3, 10))]
    rng.shuffle(lines)
    if rng.random() < 0.6:
        instruction = pick(
            rng,
            "Write the distinct lines of {src}, sorted alphabetically and without duplicates, to {out}.",
            "{src} has repeated lines. Save each different line once, in sorted order, to {out}.",
            src=src,
            out=out,
        )
        return Spec(
            instruction,
            f"sort -u {src} > {out}",
            lines_equal(out, sorted(set(lines))),
            (src, out),
            {name: text_of(lines)},
        )
    instruction = pick(
        rng,
        "Remove the duplicate lines of {src}, keeping the first occurrence of each in its original order, "
        "and write the result to {out}.",
        "Write each line of {src} only once, in the order they first appear, to {out}.",
        src=src,
        out=out,
    )
    expected = list(dict.fromkeys(lines))
    return Spec(
        instruction,
        f"awk '!seen[$0]++' {src} > {out}",
        lines_equal(out, expected),
        (src, out),
        {name: text_of(lines)},
        "medium",
    )


def distinct_lines(rng: random.Random, lo: int = 6, hi: int = 30) -> list[str]:
    """Short lines, no two alike (so that "line k" or "the last n lines" reads unambiguously)."""
    n, lines = rng.randint(lo, hi), {}
    while len(lines) < n:
        lines[sentence(rng, 1, 4)] = None
    return list(lines)


def head_lines(rng: random.Random) -> Spec:
    name, src, out = src_out(rng)
    lines = distinct_lines(rng)
    n = rng.randint(2, min(10, len(lines) - 1))
    instruction = pick(
        rng,
        "Write the first {n} lines of {src} to {out}.",
        "Save the first {n} lines of {src} into {out}.",
        "Copy only the top {n} lines of {src} to {out}.",
        n=n,
        src=src,
        out=out,
    )
    return Spec(
        instruction, f"head -n {n} {src} > {out}", lines_equal(out, lines[:n]), (src, out), {name: text_of(lines)}
    )


def tail_lines(rng: random.Random) -> Spec:
    name, src, out = src_out(rng, rng.choice(("txt", "log")))
    lines = distinct_lines(rng)
    n = rng.randint(2, min(10, len(lines) - 1))
    instruction = pick(
        rng,
        "Write the last {n} lines of {src} to {out}.",
        "Save the final {n} lines of {src} into {out}.",
        "Copy only the bottom {n} lines of {src} to {out}.",
        n=n,
        src=src,
        out=out,
    )
    return Spec(
        instruction, f"tail -n {n} {src} > {out}", lines_equal(out, lines[-n:]), (src, out), {name: text_of(lines)}
    )


def nth_line(rng: random.Random) -> Spec:
    name, src, out = src_out(rng)
    lines = distinct_lines(rng)
    k = rng.randint(2, len(lines))
    instruction = pick(
        rng,
        "Write line {k} of {src} (counting from 1) to {out}.",
        "Save the {kth} line of {src} into {out}.",
        k=k,
        kth=ordinal(k),
        src=src,
        out=out,
    )
    return Spec(
        instruction,
        f"sed -n '{k}p' {src} > {out}",
        lines_equal(out, [lines[k - 1]]),
        (src, out),
        {name: text_of(lines)},
    )


def reverse_lines(rng: random.Random) -> Spec:
    name, src, out = src_out(rng)
    lines = [sentence(rng, 1, 4) for _ in range(rng.randint(3, 15))]
    instruction = pick(
        rng,
        "Write the lines of {src} in reverse order (last line first) to {out}.",
        "Reverse the order of the lines of {src} and save the result to {out}.",
        src=src,
        out=out,
    )
    return Spec(instruction, f"tac {src} > {out}", lines_equal(out, lines[::-1]), (src, out), {name: text_of(lines)})


COLUMNS: dict[str, Callable[[random.Random, int], str]] = {
    "id": lambda rng, i: str(i + 1),
    "name": lambda rng, i: rng.choice(NAMES),
    "city": lambda rng, i: rng.choice(CITIES),
    "age": lambda rng, i: str(rng.randint(18, 80)),
    "color": lambda rng, i: rng.choice(COLORS),
    "score": lambda rng, i: str(rng.randint(0, 100)),
    "fruit": lambda rng, i: rng.choice(("apple", "pear", "plum", "fig", "lime", "kiwi")),
    "email": lambda rng, i: f"{rng.choice(NAMES).lower()}{rng.randint(1, 99)}@example.com",
}


def delimited(rng: random.Random) -> tuple[str, str, str]:
    """(delimiter, its name, the file extension)."""
    d = rng.choice(tuple(DELIMITERS))
    return d, DELIMITERS[d], "tsv" if d == "\t" else "csv" if d in ",;" else "txt"


def cut_d(d: str) -> str:
    return "" if d == "\t" else "-d, " if d == "," else f"-d'{d}' "


def csv_column(rng: random.Random) -> Spec:
    d, dname, ext = delimited(rng)
    stem = rng.choice(("users", "people", "staff", "members", "table", "records", "export", "customers"))
    src, out = f"{W}/{stem}.{ext}", f"{W}/{rng.choice(OUTS + ('column',))}.txt"
    header = rng.sample(tuple(COLUMNS), rng.randint(3, 5))
    rows = [[COLUMNS[h](rng, i) for h in header] for i in range(rng.randint(3, 10))]
    k = rng.randint(1, len(header))
    keep = rng.random() < 0.5
    instruction = pick(
        rng,
        "The fields of {src} are separated by {dname}. Write its {kth} column (`{col}`), {hdr}, to {out}.",
        "Extract column {k} (`{col}`) of {src}, whose fields are separated by {dname}, into {out}, {hdr}.",
        dname=dname,
        kth=ordinal(k),
        k=k,
        col=header[k - 1],
        hdr="including the header line" if keep else "without the header line",
        src=src,
        out=out,
    )
    column = [header[k - 1]] + [row[k - 1] for row in rows]
    solution = f"cut {cut_d(d)}-f{k} {src} > {out}" if keep else f"tail -n +2 {src} | cut {cut_d(d)}-f{k} > {out}"
    files = {f"{stem}.{ext}": text_of([d.join(row) for row in [header] + rows])}
    return Spec(
        instruction,
        solution,
        lines_equal(out, column if keep else column[1:]),
        (src, out),
        files,
        "easy" if keep else "medium",
    )


def lines_with(
    rng: random.Random, word: str, lo: int = 5, hi: int = 15, twice: bool = False, avoid: tuple[str, ...] = ()
) -> list[str]:
    """Lines of words, `word` in some of them (at least one, never all)."""
    n = rng.randint(lo, hi)
    hits = set(rng.sample(range(n), rng.randint(1, n - 1)))
    lines = []
    for i in range(n):
        words = sentence(rng, 2, 6, avoid=(word, *avoid)).split()
        if i in hits:
            for _ in range(2 if twice and rng.random() < 0.4 else 1):
                words.insert(rng.randint(0, len(words)), word)
        lines.append(" ".join(words))
    return lines


def grep_lines(rng: random.Random) -> Spec:
    name, src, out = src_out(rng, rng.choice(("txt", "log")))
    word = rng.choice(WORDS)
    lines = lines_with(rng, word)
    invert = rng.random() < 0.35
    if invert:
        instruction = pick(
            rng,
            "Write the lines of {src} that do not contain the word {word} to {out}.",
            "Save every line of {src} except those containing {word} into {out}, in their original order.",
            word=word,
            src=src,
            out=out,
        )
    else:
        instruction = pick(
            rng,
            "Write the lines of {src} that contain the word {word} to {out}.",
            "Save every line of {src} containing {word} into {out}, in their original order.",
            "Find the lines with {word} in {src} and write them to {out}.",
            word=word,
            src=src,
            out=out,
        )
    expected = [line for line in lines if (word in line.split()) != invert]
    solution = f"grep {'-v ' if invert else ''}{word} {src} > {out}"
    return Spec(instruction, solution, lines_equal(out, expected), (src, out), {name: text_of(lines)})


def count_matches(rng: random.Random) -> Spec:
    name, src, out = src_out(rng, rng.choice(("txt", "log")))
    word = rng.choice(WORDS)
    lines = lines_with(rng, word, twice=True)
    instruction = pick(
        rng,
        "How many lines of {src} contain the word {word}? Write just the number to {out}.",
        "Count the lines in {src} that mention {word} and save the count, as a plain number, to {out}.",
        word=word,
        src=src,
        out=out,
    )
    count = sum(word in line.split() for line in lines)
    return Spec(
        instruction, f"grep -c {word} {src} > {out}", number_equals(out, count), (src, out), {name: text_of(lines)}
    )


def replace_word(rng: random.Random) -> Spec:
    name, src, out = src_out(rng)
    old, new = rng.sample(WORDS, 2)
    lines = lines_with(rng, old, 3, 10, twice=True, avoid=(new,))
    expected = [line.replace(old, new) for line in lines]
    sed = f"s/{old}/{new}/g"
    if rng.random() < 0.6:
        instruction = pick(
            rng,
            "In {src}, replace every occurrence of {old} with {new}, editing the file in place.",
            "Change each {old} in {src} to {new} (edit the file itself).",
            old=old,
            new=new,
            src=src,
        )
        return Spec(instruction, f"sed -i '{sed}' {src}", lines_equal(src, expected), (src,), {name: text_of(lines)})
    instruction = pick(
        rng,
        "Write a copy of {src} with every {old} replaced by {new} to {out}.",
        "Replace all occurrences of {old} in {src} with {new} and save the result as {out}.",
        old=old,
        new=new,
        src=src,
        out=out,
    )
    return Spec(
        instruction, f"sed '{sed}' {src} > {out}", lines_equal(out, expected), (src, out), {name: text_of(lines)}
    )


def change_case(rng: random.Random) -> Spec:
    name, src, out = src_out(rng)
    lines = [sentence(rng, 1, 5) for _ in range(rng.randint(3, 10))]
    upper = rng.random() < 0.6
    if upper:
        lines = [line.capitalize() if rng.random() < 0.5 else line for line in lines]
    else:
        lines = [line.upper() for line in lines]
    case = "uppercase" if upper else "lowercase"
    instruction = pick(
        rng,
        "Write the contents of {src} converted to {case} to {out}.",
        "Convert every letter of {src} to {case} and save the result as {out}.",
        case=case,
        src=src,
        out=out,
    )
    expected = [line.upper() if upper else line.lower() for line in lines]
    solution = f"tr {'a-z A-Z' if upper else 'A-Z a-z'} < {src} > {out}"
    return Spec(instruction, solution, lines_equal(out, expected), (src, out), {name: text_of(lines)})


def make_tree(rng: random.Random) -> Spec:
    parts = names(rng, rng.randint(2, 3), DIRS)
    folder = f"{W}/{'/'.join(parts)}"
    file = f"{folder}/{rng.choice(('README', 'index', 'notes', 'main', 'config', 'empty', 'keep'))}.{rng.choice(EXTS)}"
    instruction = pick(
        rng,
        "Create the directory {folder} (and any missing parents) with an empty file {file} inside it.",
        "Make the folder {folder}, creating parent folders as needed, and create an empty file {file}.",
        folder=folder,
        file=file,
    )
    checks = [
        f"assert Path({folder!r}).is_dir(), {folder + ' is not a directory'!r}",
        f"assert Path({file!r}).is_file(), {file + ' does not exist'!r}",
        f"assert Path({file!r}).stat().st_size == 0, {file + ' is not empty'!r}",
    ]
    return Spec(instruction, f"mkdir -p {folder} && touch {file}", checks, (folder, file), {}, "medium")


def copy_or_move(rng: random.Random, move: bool) -> Spec:
    stem, other = names(rng, 2)
    ext = rng.choice(("txt", "md", "csv", "log"))
    src = f"{W}/{stem}.{ext}"
    content = text_of([sentence(rng) for _ in range(rng.randint(3, 8))])
    files = {f"{stem}.{ext}": content}
    verb = "Move" if move else "Copy"
    if rng.random() < 0.5:
        folder = rng.choice(DIRS)
        files[f"{folder}/{other}.txt"] = text_of([sentence(rng)])  # the folder exists already
        dst, target = f"{W}/{folder}/{stem}.{ext}", f"{W}/{folder}/"
        instruction = pick(
            rng,
            "{verb} {src} into the existing directory {W}/{folder}.",
            "{verb} the file {src} into the folder {W}/{folder}/, keeping its name.",
            verb=verb,
            W=W,
            folder=folder,
            src=src,
        )
        paths = (src, f"{W}/{folder}")
    else:
        dst = target = f"{W}/{other}.{ext}"
        instruction = pick(
            rng,
            "{verb} {src} to {dst}.",
            "{how} the file {src} {to} {dst}.",
            verb=verb,
            how="Rename" if move else "Make a copy of",
            to="to" if move else "named",
            src=src,
            dst=dst,
        )
        paths = (src, dst)
    checks = file_equals(dst, content) + (missing(src) if move else file_equals(src, content))
    return Spec(instruction, f"{'mv' if move else 'cp'} {src} {target}", checks, paths, files)


def copy_file(rng: random.Random) -> Spec:
    return copy_or_move(rng, move=False)


def move_file(rng: random.Random) -> Spec:
    return copy_or_move(rng, move=True)


def delete_files(rng: random.Random) -> Spec:
    if rng.random() < 0.5:
        stems = names(rng, rng.randint(3, 5))
        exts = [rng.choice(EXTS) for _ in stems]
        files = {f"{s}.{e}": text_of([sentence(rng)]) for s, e in zip(stems, exts, strict=True)}
        gone, *kept = list(files)
        path = f"{W}/{gone}"
        instruction = pick(
            rng,
            "Delete the file {path}; leave the other files alone.",
            "Remove {path} from the workspace (only that file).",
            path=path,
        )
        return Spec(
            instruction,
            f"rm {path}",
            missing(path) + [f"assert Path('{W}/{k}').is_file()" for k in kept],
            (path,),
            files,
        )
    folder = rng.choice(DIRS)
    ext, *others = rng.sample(EXTS, 3)
    gone = [f"{folder}/{s}.{ext}" for s in names(rng, rng.randint(2, 4))]
    kept = [f"{folder}/{s}.{rng.choice(others)}" for s in names(rng, rng.randint(1, 4))]
    files = {path: text_of([sentence(rng)]) for path in gone + kept}
    instruction = pick(
        rng,
        "Delete every .{ext} file in {W}/{folder}, but keep the other files there.",
        "Remove all files ending in .{ext} from the directory {W}/{folder}; leave the rest.",
        ext=ext,
        W=W,
        folder=folder,
    )
    checks = [c for g in gone for c in missing(f"{W}/{g}")] + [f"assert Path('{W}/{k}').is_file()" for k in kept]
    return Spec(instruction, f"rm {W}/{folder}/*.{ext}", checks, (f"{W}/{folder}",), files)


def sum_numbers(rng: random.Random) -> Spec:
    name, src, out = src_out(rng)
    numbers = [rng.randint(0, 500) for _ in range(rng.randint(3, 20))]
    instruction = pick(
        rng,
        "{src} has one number per line. Write their sum to {out}.",
        "Add up the numbers in {src} and write the total, as a plain number, to {out}.",
        "What is the sum of the numbers in {src}? Save just the number to {out}.",
        src=src,
        out=out,
    )
    return Spec(
        instruction,
        f"awk '{{s+=$1}} END {{print s}}' {src} > {out}",
        number_equals(out, sum(numbers)),
        (src, out),
        {name: text_of([str(n) for n in numbers])},
    )


def sum_column(rng: random.Random) -> Spec:
    d, dname, ext = delimited(rng)
    stem = rng.choice(("sales", "scores", "prices", "orders", "points", "budget", "stock", "hours"))
    src, out = f"{W}/{stem}.{ext}", f"{W}/{rng.choice(OUTS + ('total', 'sum'))}.txt"
    width = rng.randint(2, 4)  # numeric fields after the name
    rows = [[rng.choice(NAMES)] + [str(rng.randint(0, 200)) for _ in range(width)] for _ in range(rng.randint(3, 12))]
    k = rng.randint(2, width + 1)
    instruction = pick(
        rng,
        "Each line of {src} is a record whose fields are separated by {dname}. Write the sum of field {k} "
        "over all lines to {out}.",
        "{src} has fields separated by {dname}. Add up the {kth} field of every line and save the total to {out}.",
        dname=dname,
        k=k,
        kth=ordinal(k),
        src=src,
        out=out,
    )
    fs = "" if d == "\t" else f"-F'{d}' "
    solution = f"awk {fs}'{{s+=${k}}} END {{print s}}' {src} > {out}"
    total = sum(int(row[k - 1]) for row in rows)
    files = {f"{stem}.{ext}": text_of([d.join(row) for row in rows])}
    return Spec(instruction, solution, number_equals(out, total), (src, out), files, "medium")


def count_files(rng: random.Random) -> Spec:
    folder = rng.choice(DIRS)
    out = f"{W}/{rng.choice(OUTS + ('count',))}.txt"
    ext, *others = rng.sample(EXTS, 3)
    matching = names(rng, rng.randint(1, 8))
    rest = names(rng, rng.randint(1, 6))
    files = {f"{folder}/{s}.{ext}": text_of([sentence(rng)]) for s in matching}
    files |= {f"{folder}/{s}.{rng.choice(others)}": text_of([sentence(rng)]) for s in rest}
    instruction = pick(
        rng,
        "How many .{ext} files are in {W}/{folder}? Write just the number to {out}.",
        "Count the files ending in .{ext} in the directory {W}/{folder} and save just the number to {out}.",
        ext=ext,
        W=W,
        folder=folder,
        out=out,
    )
    return Spec(
        instruction,
        f"ls {W}/{folder}/*.{ext} | wc -l > {out}",
        number_equals(out, len(matching)),
        (f"{W}/{folder}", out),
        files,
    )


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
