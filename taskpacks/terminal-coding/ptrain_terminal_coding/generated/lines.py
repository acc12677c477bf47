"""Families over the lines of one file: write, append, count, sort, deduplicate, head, tail, pick and
reverse them.
"""

from __future__ import annotations

import random

from ptrain_terminal_coding.generated.spec import (
    STEMS,
    WORDS,
    Spec,
    W,
    file_equals,
    lines_equal,
    number_equals,
    ordinal,
    pick,
    sentence,
    src_out,
    text_of,
)


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
