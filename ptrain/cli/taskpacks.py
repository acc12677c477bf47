"""`ptrain taskpacks`: list, show, check and scaffold taskpacks."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table
from rich.text import Text

from ptrain import taskpack as tp
from ptrain.cli import output
from ptrain.sandbox import PoolSet, images, runtime
from ptrain.scaffold import scaffold
from ptrain.verify import CheckResult, check_taskpack, probes_of, select_tasks

app = typer.Typer(help="Installed taskpacks: list, show, check, new.", no_args_is_help=True)
console = Console()


def counts(pack: tp.Taskpack) -> dict[str, int]:
    return {split: sum(1 for _ in pack.tasks(split)) for split in tp.SPLITS}


@app.command("list")
def list_(as_json: bool = output.JSON_OPTION) -> None:
    """Installed taskpacks with their task counts per split."""
    rows = []
    for name, ep in sorted(tp.installed().items()):
        row = {"name": name, "version": None, "package": ep.dist.name if ep.dist else None,
               **dict.fromkeys(tp.SPLITS), "image": None, "error": None}  # fmt: skip
        try:
            pack = tp.load(name)
        except tp.ConfigError as e:
            rows.append({**row, "error": str(e)})
            continue
        rows.append({**row, "name": pack.name, "version": pack.version, **counts(pack),
                     "image": images.taskpack_image(pack.image)})  # fmt: skip
    shown = [{**row, "image": Text(f"broken: {row['error']}", "red")} if row["error"] else row for row in rows]
    output.print_rows(rows if as_json else shown, ("name", "version", "package", *tp.SPLITS, "image"), as_json,
                      title="taskpacks", right=tp.SPLITS)  # fmt: skip


@app.command()
def show(name: str, as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """Categories, difficulties and tools of one taskpack."""
    pack = tp.load(name)
    tasks = [task for split in tp.SPLITS for task in pack.tasks(split)]
    by_cat = Counter((task.category, task.difficulty) for task in tasks)
    tools = [dict(tool.schema) for tool in pack.tools()]
    if as_json:
        print(json.dumps({"name": pack.name, "version": pack.version, "splits": counts(pack), "tools": tools,
                          "categories": {f"{c}/{d}": n for (c, d), n in sorted(by_cat.items())}}, indent=2))  # fmt: skip
        return
    console.print(f"[bold]{pack.name}[/] {pack.version} · image {images.taskpack_image(pack.image)} · {counts(pack)}")
    table = Table(title="tasks by category")
    table.add_column("category")
    for level in tp.DIFFICULTIES:
        table.add_column(level, justify="right")
    for category in sorted({c for c, _ in by_cat}):
        table.add_row(category, *(str(by_cat[(category, level)]) for level in tp.DIFFICULTIES))
    console.print(table)
    for tool in tools:
        console.print(
            f"[cyan]{escape(tool['name'])}[/]({escape(', '.join(tool['parameters'].get('properties', {})))}): "
            f"{escape(tool['description'])}"
        )


@app.command()
def check(
    name: str,
    task: list[str] = typer.Option([], "--task", help="Only these task ids (repeatable)."),
    split: list[str] = typer.Option(list(tp.SPLITS), "--split", help="Splits to check (repeatable)."),
    category: list[str] = typer.Option([], "--category", help="Only these categories (repeatable)."),
    difficulty: list[str] = typer.Option([], "--difficulty", help="Only these tiers (repeatable)."),
    sample: int | None = typer.Option(None, help="Check a random sample of this many tasks."),
    seed: int = typer.Option(0, help="Seed of the sample."),
    concurrency: int = typer.Option(4, help="Tasks checked at once."),
    probes: bool = typer.Option(True, "--probes/--no-probes", help="Replay the adversarial probes too."),
    probe: list[str] = typer.Option([], "--probe", help="Only these probes (repeatable)."),
    timeout_s: float | None = typer.Option(None, "--timeout-s", help="A task's whole check fails after this long."),
    require_gold: bool = typer.Option(False, "--require-gold", help="Fail on a task that has no gold solution."),
    as_json: bool = output.JSON_OPTION,
) -> None:
    """Prove the verifier: for every task, gold must score 1, a no-op 0, and every adversarial probe 0.

    A task without a gold solution is "no gold": its tests were never shown passable, so it is not
    counted as passed (and fails the check under --require-gold)."""
    pack = tp.load(name)
    tasks = select_tasks(pack, split, task, sample, seed, category, difficulty)
    if not tasks:
        raise tp.ConfigError(f"no task of {name} matches the selection", fix="see `ptrain taskpacks show NAME`")
    known = {p.name for t in tasks for p in probes_of(pack, t)}
    if unknown := sorted(set(probe) - known):
        raise tp.ConfigError(f"no probe named {', '.join(unknown)} for these tasks (known: {', '.join(sorted(known))})")
    runtime.ensure_service()

    async def run() -> list[CheckResult]:
        with Progress(console=console, transient=True, disable=as_json) as progress:
            bar = progress.add_task(f"checking {len(tasks)} tasks of {name}", total=len(tasks))
            async with PoolSet(size=min(concurrency, 4), max_active=2 * concurrency) as pools:
                return await check_taskpack(pack, tasks, pools, concurrency, lambda r: progress.advance(bar), probes,
                                            probe, timeout_s)  # fmt: skip

    results = sorted(asyncio.run(run()), key=lambda r: r.task.id)
    counted = Counter(r.status for r in results)
    failing = counted["failed"] + (counted["no gold"] if require_gold else 0)
    if as_json:
        print(json.dumps({"taskpack": name, "results": [r.as_dict() for r in results], **{
            k.replace(" ", "_"): counted[k] for k in ("passed", "failed", "no gold")}}, indent=1))  # fmt: skip
        if failing:
            raise typer.Exit(1)
        return
    table = Table(title=f"{name}: gold must score 1, no-op 0, every probe 0")
    for col in ("task", "category", "difficulty", "gold", "no-op", "probes at 0", ""):
        table.add_column(col)
    fmt = lambda v: "-" if v is None else f"{v:g}"  # noqa: E731
    marks = {"passed": "[green]✓[/]", "no gold": "[yellow]no gold: not checked against a solution[/]"}
    for r in results:
        mark = marks.get(r.status) or f"[red]✗ {escape(r.problem)}[/]"
        at_zero = f"{sum(v == 0 for v in r.probes.values())}/{len(r.probes)}" if r.probes else "-"
        table.add_row(r.task.id, r.task.category, r.task.difficulty, fmt(r.gold), fmt(r.noop), at_zero, mark)
    console.print(table)
    by_probe: dict[str, list[float]] = {}
    for r in results:
        for probe_name, reward in r.probes.items():
            by_probe.setdefault(probe_name, []).append(reward)
    if by_probe:
        probes_table = Table(title="probes: each must score 0 on every task")
        for col in ("probe", "tasks", "scored", "max reward", ""):
            probes_table.add_column(col)
        for probe_name, rewards in sorted(by_probe.items()):
            scored = sum(v > 0 for v in rewards)
            probes_table.add_row(probe_name, str(len(rewards)), str(scored), f"{max(rewards):g}",
                                 "[green]✓[/]" if not scored else "[red]✗[/]")  # fmt: skip
        console.print(probes_table)
    line = f"{counted['passed']} passed, {counted['failed']} failed"
    if counted["no gold"]:
        line += f", {counted['no gold']} without gold" + (" (--require-gold: failing)" if require_gold else "")
    console.print(line)
    if failing:
        raise typer.Exit(1)


@app.command()
def new(name: str, directory: Path = typer.Option(Path("."), "--dir", help="Where to create ptrain-NAME/.")) -> None:
    """Scaffold a taskpack package that passes `check` as generated."""
    root = scaffold(name, directory)
    console.print(f"[green]✓[/] created {root}\n  pip install -e {root}\n  ptrain taskpacks check {name}")


@app.command("import-harbor")
def import_harbor(
    directory: Path = typer.Argument(..., help="A Harbor or Terminal-Bench task directory, or a folder of them."),
    dest: Path | None = typer.Option(
        None, help="Where converted tasks go (default: $PTRAIN_IMPORT_DIR or ~/.cache/ptrain/imported/terminal-coding)."
    ),
    split: str = typer.Option("test", help="The split the tasks go to, or 'hash' for train/dev/test by task id."),
    root: bool = typer.Option(
        True,
        help="The agent works as root and the whole container state is verified (as Terminal-Bench runs "
        "tasks); --no-root: as the sandbox user, and only the workdir is verified.",
    ),
    as_json: bool = output.JSON_OPTION,
) -> None:
    """Import Harbor / Terminal-Bench tasks into terminal-coding, converted to run offline here."""
    try:  # the converter lives with the taskpack that runs the imported tasks
        from ptrain_terminal_coding.harbor import import_dir, import_tasks
    except ImportError as e:
        raise tp.ConfigError(
            f"import-harbor needs the terminal-coding taskpack ({e})", fix="pip install -e taskpacks/terminal-coding"
        ) from e
    if split not in (*tp.SPLITS, "hash"):
        raise tp.ConfigError(f"--split {split!r} is not one of {(*tp.SPLITS, 'hash')}")
    target = dest or import_dir()
    results = import_tasks(directory, target, "" if split == "hash" else split, root=root)
    failed = [r for r in results if not r.ok]
    if as_json:
        rows = [{"task": f"imported/{r.name}", "source": str(r.source), "layout": r.layout, "status": r.status,
                 "base": r.base, "workdir": r.workdir, "notes": r.notes, "warnings": r.warnings,
                 "requirements": r.requirements, "pins": r.pins, "error": r.error} for r in results]  # fmt: skip
        print(json.dumps({"dest": str(target), "results": rows}, indent=1))
        if failed:
            raise typer.Exit(1)
        return
    table = Table(title=f"imported into {target}")
    for col in ("task", "layout", "FROM", "workdir", "mapped and replaced", ""):
        table.add_column(col, overflow="fold")
    for r in results:
        pins = (
            [f"{len(r.pins)} pinned wheels: {', '.join(r.pins[:4])}{', ...' if len(r.pins) > 4 else ''}"]
            if r.pins
            else []
        )
        changes = "\n".join([escape(n) for n in r.notes + pins] + [f"[yellow]! {escape(w)}[/]" for w in r.warnings])
        mark = "[green]✓[/]" if r.ok else f"[red]✗ refused: {escape(r.error)}[/]"
        table.add_row(f"imported/{r.name}", r.layout, r.base, r.workdir, changes, mark)
    console.print(table)
    warned = sum(1 for r in results if r.ok and r.warnings)
    console.print(f"{len(results) - len(failed)} imported ({warned} with warnings), {len(failed)} refused")
    if target != import_dir():
        console.print(f"terminal-coding reads imports from {import_dir()}: set PTRAIN_IMPORT_DIR={target} to use these")
    if failed:
        raise typer.Exit(1)


@app.command("import-cad")
def import_cad(
    src: Path = typer.Argument(
        ..., help="A folder of task YAMLs (ptrain's or CadEval's schema), a CadEval checkout, or one YAML file."
    ),  # fmt: skip
    dest: Path | None = typer.Option(
        None, help="Where they go (default: $PTRAIN_CAD_IMPORT_DIR or ~/.cache/ptrain/imported/cad)."
    ),
    split: str = typer.Option("test", help="The split imported tasks go to; '' keeps each file's own."),
    as_json: bool = output.JSON_OPTION,
) -> None:
    """Import CAD benchmark tasks (a description and a reference STL each) into the cad taskpack."""
    try:
        from ptrain_cad.imported import import_dir, import_tasks
    except ImportError as e:
        raise tp.ConfigError(f"import-cad needs the cad taskpack ({e})", fix="pip install -e taskpacks/cad") from e
    if split and split not in tp.SPLITS:
        raise tp.ConfigError(f"--split {split!r} is not one of {tp.SPLITS}")
    if not src.exists():
        raise tp.ConfigError(f"{src} does not exist")
    target = dest or import_dir()
    results = import_tasks(src, target, split)
    refused = [r for r in results if r.error]
    if as_json:
        print(json.dumps({"dest": str(target), "results": [r.as_dict() for r in results]}, indent=1))
    else:
        table = Table(title=f"CAD tasks imported into {target}")
        for col in ("file", "task", "split", ""):
            table.add_column(col, overflow="fold")
        for r in results:
            mark = (f"[red]✗ refused: {escape(r.error)}[/]" if r.error else
                    "\n".join(f"[yellow]! {escape(w)}[/]" for w in r.warnings) or "[green]✓[/]")  # fmt: skip
            table.add_row(escape(r.source.name), r.task_id, r.split, mark)
        console.print(table)
        warned = sum(1 for r in results if r.warnings and not r.error)
        console.print(f"{len(results) - len(refused)} imported ({warned} with warnings), {len(refused)} refused")
        if target != import_dir():
            console.print(f"the cad taskpack reads imports from {import_dir()}: set PTRAIN_CAD_IMPORT_DIR={target}")
    if not results:
        raise tp.ConfigError(f"no task YAML in {src} (nor in {src / 'tasks'})")
    if refused:
        raise typer.Exit(1)


@app.command("import-financial")
def import_financial(
    files: list[Path] = typer.Argument(..., help="FinQA- or TAT-QA-shaped JSON files (e.g. their test sets)."),
    dest: Path | None = typer.Option(
        None, help="Where they go (default: $PTRAIN_FINANCIAL_IMPORT_DIR or ~/.cache/ptrain/imported/financial-docs)."
    ),
    as_json: bool = output.JSON_OPTION,
) -> None:
    """Import FinQA / TAT-QA question files into financial-docs as held-out test tasks."""
    try:
        from ptrain_financial_docs.imported import import_dir, import_file, unpassable
    except ImportError as e:
        raise tp.ConfigError(
            f"import-financial needs the financial-docs taskpack ({e})", fix="pip install -e taskpacks/financial-docs"
        ) from e
    target = dest or import_dir()
    rows = []
    for path in files:
        row = {"file": str(path), "questions": 0, "status": "refused", "unpassable": [], "error": ""}
        rows.append(row)
        try:
            tasks = import_file(path, target)
        except tp.ConfigError as e:
            row["error"] = str(e)
            continue
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            row["error"] = f"not a FinQA or TAT-QA file: {type(e).__name__}: {e}"
            continue
        row["questions"], row["unpassable"] = len(tasks), [t.id for t in unpassable(tasks)]
        row["status"] = "imported with warnings" if row["unpassable"] else "imported"
    if as_json:
        print(json.dumps({"dest": str(target), "results": rows}, indent=1))
    else:
        for row in rows:
            name = escape(row["file"])
            if row["error"]:
                console.print(f"[red]✗[/] {name}: refused: {escape(row['error'])}")
                continue
            console.print(f"[green]✓[/] {name}: {row['questions']} questions → {escape(str(target))}")
            if row["unpassable"]:
                shown = ", ".join(row["unpassable"][:5]) + (", ..." if len(row["unpassable"]) > 5 else "")
                console.print(f"  [yellow]! {len(row['unpassable'])} golds do not pass their own scoring (no answer "
                              f"can earn them; --json lists them): {escape(shown)}[/]")  # fmt: skip
        if target != import_dir():
            console.print(f"financial-docs reads imports from {import_dir()}: set PTRAIN_FINANCIAL_IMPORT_DIR={target}")
    if any(row["error"] for row in rows):
        raise typer.Exit(1)
