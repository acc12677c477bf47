"""Families over delimited columns and words: cut a column, grep, count matches, replace a word, change
the case.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ptrain_terminal_coding.generated.spec import (
    CITIES,
    COLORS,
    DELIMITERS,
    NAMES,
    OUTS,
    WORDS,
    Spec,
    W,
    lines_equal,
    number_equals,
    ordinal,
    pick,
    sentence,
    src_out,
    text_of,
)

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
