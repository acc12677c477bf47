"""`ptrain store`: look inside a run directory, and export it.

`ls` counts episodes by taskpack, split and status with a reward summary; `show` prints one episode
as a transcript in which model turns (trained on) and tool output (not trained on) look different;
`stats` is a health check that says loudly when a run cannot teach the model anything (most
episodes truncated, groups whose rewards are all equal, damaged shards); `export` writes chat JSONL
for supervised fine-tuning or one plain Parquet file for any reader.
"""

from __future__ import annotations

import json
from collections import Counter
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import typer
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ptrain.cli import output
from ptrain.episode import EPISODE_SCHEMA, STATUSES, Episode, StoredVerdict, episodes_table
from ptrain.store import Store, write_atomic

app = typer.Typer(help="Inspect and export a run's trajectory store.", no_args_is_help=True)
console = Console(highlight=False)

ROLE_STYLES = {"assistant": "green", "tool": "yellow", "user": "cyan", "system": "bright_black"}


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def _shown(text: str) -> str:
    """Printable text: undecodable tool-output bytes appear as \\xNN."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _middle(text: str, max_chars: int, max_lines: int = 40) -> Text:
    """Head and tail of a long text with a marker saying how much was cut."""
    text = _shown(text)
    lines = text.splitlines(keepends=True)
    if len(lines) > max_lines:
        head, tail = "".join(lines[: max_lines // 2]), "".join(lines[-(max_lines // 2) :])
    elif len(text) > max_chars:
        head, tail = text[: max_chars // 2], text[-(max_chars // 2) :]
    else:
        return Text(text)
    head, tail = head[: max_chars // 2], tail[-(max_chars // 2) :]
    cut = len(text) - len(head) - len(tail)
    return Text.assemble(head.rstrip("\n"), (f"\n… {cut} chars cut …\n", "bold magenta"), tail)


@app.command("ls")
def ls(run: Path = typer.Argument(..., help="The run directory."), as_json: bool = output.JSON_OPTION) -> None:
    """Count episodes by taskpack, split and status, with the reward of those verified."""
    summary = Store(run).summary()
    if not summary.num_rows and not as_json:
        console.print(f"{run}: no episodes yet")
        return
    rows: dict[tuple[str, str], Counter] = {}
    rewards: dict[tuple[str, str], list[tuple[float, bool]]] = {}
    for taskpack, split, status, reward, passed in zip(
        *(summary[c].to_pylist() for c in ("taskpack", "split", "status", "reward", "passed")), strict=True
    ):
        rows.setdefault((taskpack, split), Counter())[status] += 1
        if reward is not None:
            rewards.setdefault((taskpack, split), []).append((reward, passed))
    listed = []
    for (taskpack, split), counts in sorted(rows.items()):
        scored = rewards.get((taskpack, split), [])
        listed.append({"taskpack": taskpack, "split": split, "episodes": counts.total(),
                       **{s: counts[s] for s in STATUSES}, "verified": len(scored),
                       "mean_reward": float(np.mean([r for r, _ in scored])) if scored else None,
                       "pass_rate": float(np.mean([p for _, p in scored])) if scored else None})  # fmt: skip
    columns = ("taskpack", "split", "episodes", *STATUSES, "verified", "mean_reward", "pass_rate")
    output.print_rows(listed, columns, as_json, title=f"{run} · {summary.num_rows} episodes",
                      cells={"mean_reward": lambda v: "-" if v is None else f"{v:.3f}",
                             "pass_rate": lambda v: "-" if v is None else f"{v:.1%}"},
                      right=set(columns) - {"taskpack", "split"})  # fmt: skip


def _mask_runs(episode: Episode) -> Text:
    """The token sequence as runs: prompt, then model (trained on) and tool (not trained on) turns."""
    mask = episode.loss_mask.astype(np.int8)
    if not len(mask):
        return Text("no tokens", style="bright_black")
    edges = np.flatnonzero(np.diff(mask)) + 1
    starts, ends = np.r_[0, edges], np.r_[edges, len(mask)]
    parts: list[tuple[str, str]] = []
    for i, (start, end) in enumerate(zip(starts, ends, strict=True)):
        model = bool(mask[start])
        label = "model" if model else "prompt" if i == 0 else "tool"
        style = "green" if model else "bright_black" if i == 0 else "yellow"
        parts += [(" · ", ""), (f"{label} {end - start}", style)]
    return Text.assemble(*parts[1:])


@app.command("show")
def show(
    run: Path = typer.Argument(..., help="The run directory."),
    episode_id: str = typer.Argument(..., help="An episode id, or a unique prefix of one."),
    max_chars: int = typer.Option(2000, help="Show at most this many characters of each message (head and tail)."),
) -> None:
    """Print one episode as a transcript: turns, tool calls, verdict; model and tool tokens told apart."""
    store = Store(run)
    episode = store.episode(episode_id)
    verdict = store.latest_verdicts().get(episode.episode_id)
    head = Table.grid(padding=(0, 2))
    head.add_row("task", f"{episode.taskpack} {episode.taskpack_version} · {episode.task_id} · {episode.split}")
    head.add_row("group", f"{episode.group_id} · sample {episode.sample_index} of {episode.group_size}")
    head.add_row("model", f"{episode.model} · policy version {episode.policy_version}")
    status = Text(episode.status, style="green" if episode.status == "ok" else "bold red")
    if episode.error_type:
        status.append(f" {episode.error_type}: {episode.error_message}")
    head.add_row("status", status)
    head.add_row("tokens", f"{episode.num_tokens} = prompt {episode.prompt_tokens} + model {episode.model_tokens}"
                           f" + tool {episode.tool_tokens}")  # fmt: skip
    head.add_row("sequence", _mask_runs(episode))
    if episode.timings:
        head.add_row("timings", " · ".join(f"{k} {v:.2f}" for k, v in episode.timings.items()))
    if verdict:
        details = _middle(json.dumps(verdict.details, ensure_ascii=False), max_chars)
        line = Text(f"reward {verdict.reward:.3f} · {'passed' if verdict.passed else 'failed'}",
                    style="bold green" if verdict.passed else "bold red")  # fmt: skip
        head.add_row("verdict", Text.assemble(line, f" · verifier {verdict.verifier_version or '?'} · ", details))
    else:
        head.add_row("verdict", Text("not verified yet", style="bright_black"))
    console.print(Panel(head, title=f"episode {episode.episode_id}", title_align="left"))
    for turn, message in enumerate(episode.transcript):
        role = str(message.get("role", "?"))
        content = message.get("content", "")
        body = _middle(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False), max_chars)
        extra = {k: v for k, v in message.items() if k not in ("role", "content")}
        parts = [body] + ([Text(_shown(json.dumps(extra, ensure_ascii=False)), style="bright_black")] if extra else [])
        note = {"assistant": "model tokens, trained on", "tool": "tool output, not trained on"}.get(role, "prompt")
        console.print(Panel(Group(*parts), title=f"{turn} {role}", subtitle=note, title_align="left",
                            subtitle_align="right", border_style=ROLE_STYLES.get(role, "white")))  # fmt: skip
    if episode.tool_calls:
        calls = Table(title="tool calls", title_justify="left")
        for name in ("#", "tool", "arguments", "result"):
            calls.add_column(name)
        for i, call in enumerate(episode.tool_calls):
            rest = {k: v for k, v in call.items() if k not in ("name", "arguments")}
            calls.add_row(str(i), str(call.get("name", "?")), _middle(json.dumps(call.get("arguments", {})), 200),
                          _middle(json.dumps(rest, ensure_ascii=False), 200))  # fmt: skip
        console.print(calls)


@app.command("stats")
def stats(run: Path = typer.Argument(..., help="The run directory.")) -> None:
    """Files, tokens, statuses, rewards and groups, with loud warnings where training cannot learn."""
    store = Store(run)
    summary = store.summary()  # reading first quarantines damaged shards, so the file table counts them
    usage = store.disk_usage()
    files = Table(title=f"{run}: files")
    for name in ("folder", "files", "bytes"):
        files.add_column(name, justify="left" if name == "folder" else "right")
    for folder, (count, size) in usage.items():
        files.add_row(folder, str(count), _human(size))
    console.print(files)
    warnings = []
    if usage["quarantine"][0]:
        warnings.append(f"{usage['quarantine'][0]} damaged shard(s) set aside in {run / 'quarantine'}")
    n = summary.num_rows
    if not n:
        console.print("no episodes yet")
    else:
        warnings += _episode_stats(summary)
    for warning in warnings:
        console.print(Text(f"warning: {warning}", style="bold red"))


def _episode_stats(summary) -> list[str]:
    n = summary.num_rows
    col = {name: summary[name].to_numpy(zero_copy_only=False) for name in summary.column_names}
    out = Table(title=f"{n} episodes", show_header=False)
    out.add_column("what")
    out.add_column("value")
    statuses = Counter(col["status"].tolist())
    out.add_row("status", " · ".join(f"{s} {statuses[s]} ({statuses[s] / n:.0%})" for s in STATUSES))
    errors = Counter(e for e in col["error_type"].tolist() if e)
    if errors:
        out.add_row("errors", " · ".join(f"{e} {c}" for e, c in errors.most_common(5)))
    tokens = col["num_tokens"]
    out.add_row("tokens", f"mean {tokens.mean():.0f} · p50 {np.percentile(tokens, 50):.0f} · "
                          f"p95 {np.percentile(tokens, 95):.0f} · max {tokens.max()}")  # fmt: skip
    out.add_row("model tokens", f"{col['model_tokens'].sum() / max(tokens.sum(), 1):.1%} of all tokens")
    versions = col["policy_version"]
    out.add_row("policy versions", f"{versions.min()} … {versions.max()}")
    members: dict[str, set[int]] = {}
    sizes: dict[str, int] = {}
    rewards: dict[str, list[float]] = {}
    for group, sample, size, reward in zip(
        col["group_id"], col["sample_index"], col["group_size"], col["reward"], strict=True
    ):
        members.setdefault(group, set()).add(int(sample))
        sizes[group] = int(size)
        if reward is not None and not np.isnan(reward):
            rewards.setdefault(group, []).append(float(reward))
    complete = [g for g in members if len(members[g]) >= sizes[g]]
    out.add_row("groups", f"{len(members)} · complete {len(complete)} · incomplete {len(members) - len(complete)}")
    scored = np.array([r for r in col["reward"].tolist() if r is not None and not np.isnan(r)])
    warnings = []
    if len(scored):
        passed = [p for p in col["passed"].tolist() if p is not None]
        out.add_row(
            "rewards", f"verified {len(scored)} of {n} · mean {scored.mean():.3f} · pass rate {np.mean(passed):.1%}"
        )
        verified = [g for g in complete if len(rewards.get(g, [])) == sizes[g]]
        flat = [g for g in verified if len(set(rewards[g])) == 1]
        if verified:
            out.add_row("flat groups", f"{len(flat)} of {len(verified)} verified groups have equal rewards (no signal)")
            if len(flat) > len(verified) / 2:
                warnings.append(
                    f"{len(flat)} of {len(verified)} verified groups have all-equal rewards: GRPO learns nothing from them"
                )
    else:
        out.add_row("rewards", "no verdicts yet")
    console.print(out)
    if statuses["truncated"] > n / 2:
        warnings.append(
            f"{statuses['truncated']} of {n} episodes were truncated: raise the budget or shorten the tasks"
        )
    return warnings


def _utf8(text: str) -> str:
    """Text any UTF-8 reader accepts: undecodable tool-output bytes (lone surrogates) become U+FFFD."""
    try:
        text.encode()
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _message(message: dict[str, Any]) -> dict[str, str]:
    content = message.get("content", "")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return {"role": str(message.get("role", "")), "content": _utf8(text)}


def export_jsonl(store: Store, path: str | Path, **filters: Any) -> int:
    """Chat-format JSONL for supervised fine-tuning: {"messages": [...], ids, reward} per episode."""
    verdicts, count = store.latest_verdicts(), 0

    def write(tmp: Path) -> None:
        nonlocal count
        with open(tmp, "w", encoding="utf-8") as f:
            for e in store.episodes(**filters):
                v = verdicts.get(e.episode_id)
                row = {"messages": [_message(m) for m in e.transcript], "episode_id": e.episode_id,
                       "task_id": e.task_id, "split": e.split, "status": e.status,
                       "reward": v.reward if v else None, "passed": v.passed if v else None}  # fmt: skip
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
                count += 1

    write_atomic(Path(path), write)
    return count


EXPORT_SCHEMA = pa.schema(
    [f for f in EPISODE_SCHEMA if f.name not in ("transcript", "timings", "metadata")]
    + [pa.field("messages", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
       pa.field("reward", pa.float64()), pa.field("passed", pa.bool_())]
)  # fmt: skip


def export_parquet(store: Store, path: str | Path, **filters: Any) -> int:
    """One plain Parquet file: the episode columns, messages as role/content structs, the latest reward."""
    verdicts, count = store.latest_verdicts(), 0

    def write(tmp: Path) -> None:
        nonlocal count
        with pq.ParquetWriter(tmp, EXPORT_SCHEMA, compression="zstd") as out:
            batch: list[Episode] = []
            for episode in store.episodes(**filters):
                batch.append(episode)
                if len(batch) == 512:
                    out.write_table(_export_table(batch, verdicts))
                    count, batch = count + len(batch), []
            if batch or not count:
                out.write_table(_export_table(batch, verdicts))
                count += len(batch)

    write_atomic(Path(path), write)
    return count


def _export_table(batch: list[Episode], verdicts: dict[str, StoredVerdict]) -> pa.Table:
    table = episodes_table(batch)
    joined = [verdicts.get(e.episode_id) for e in batch]
    columns = {name: table[name] for name in EXPORT_SCHEMA.names if name in table.column_names}
    columns["messages"] = [[_message(m) for m in e.transcript] for e in batch]
    columns["reward"] = [v.reward if v else None for v in joined]
    columns["passed"] = [v.passed if v else None for v in joined]
    return pa.table(columns, schema=EXPORT_SCHEMA)


class Format(StrEnum):
    jsonl = "jsonl"
    parquet = "parquet"


@app.command("export")
def export(
    run: Path = typer.Argument(..., help="The run directory."),
    format: Format = typer.Option(
        Format.jsonl, "--format", help="jsonl: chat messages for SFT; parquet: one plain file."
    ),
    out: Path | None = typer.Option(None, "--out", help="Where to write; default RUN-NAME.FORMAT here."),
    split: str | None = typer.Option(None, help="Only this split."),
    status: str | None = typer.Option(None, help="Only this status (ok, truncated, timeout, error)."),
    min_reward: float | None = typer.Option(None, help="Only episodes verified with at least this reward."),
) -> None:
    """Export episodes: chat-format JSONL for supervised fine-tuning, or a Parquet that `datasets` reads."""
    store = Store(run)
    out = out or Path(f"{run.resolve().name}.{format.value}")
    filters = {k: v for k, v in dict(split=split, status=status, min_reward=min_reward).items() if v is not None}
    exporter = export_jsonl if format is Format.jsonl else export_parquet
    count = exporter(store, out, **filters)
    console.print(f"wrote {count} episode{'s' * (count != 1)} to {out}")
