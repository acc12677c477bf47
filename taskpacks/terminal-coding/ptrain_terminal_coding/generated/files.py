"""Families over files and folders: make a tree, copy, move, delete, sum numbers, count files."""

from __future__ import annotations

import random

from ptrain_terminal_coding.generated.columns import delimited
from ptrain_terminal_coding.generated.spec import (
    DIRS,
    EXTS,
    NAMES,
    OUTS,
    Spec,
    W,
    file_equals,
    missing,
    names,
    number_equals,
    ordinal,
    pick,
    sentence,
    src_out,
    text_of,
)


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
