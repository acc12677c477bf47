"""`ptrain report RUN`: one self-contained HTML file with the run's numbers and plots.

The page needs nothing but itself: every plot is a PNG (`ptrain/report_plots.py`) embedded as a data
URI, every table plain HTML. It reads only what the stages left in the run directory:

    RUN/metrics/train.jsonl, online.jsonl   reward, pass rate and loss over training steps; trainer vs
                                            behaviour logprobs (mismatch, k3), entropy, clipped and capped;
                                            the curriculum's tiers and tasks by pass rate over time
    RUN/metrics/rollout-*.jsonl             engine busy and tool wait over time (one snapshot a second)
    RUN/episodes (the store)                episode length and turn distributions, common tool errors
    evaluation runs (RUN/eval/*/ by default, or --eval DIR ...)   pass@1 per category, before and after

A plot with no data says so in the page instead of being left out, so a reader knows what is missing.
A small script marks the page with how many plots loaded (`data-plots-loaded`), which the tests read
from headless Chromium.
"""

from __future__ import annotations

import base64
import html
import json
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ptrain.episode import Episode
from ptrain.report_plots import (
    engine_seconds,
    plot_categories,
    plot_curriculum,
    plot_engine,
    plot_errors,
    plot_lengths,
    plot_policy,
    plot_training,
)
from ptrain.store import Store

MAX_EPISODES = 20_000  # the histograms and error counts read at most this many episodes per run


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    if path.is_file():
        for line in path.read_text().splitlines():
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue  # a line cut by a kill: the rest still counts
    return rows


def episodes_of(run: Path) -> list[Episode]:
    if not (run / "episodes").is_dir():
        return []
    out = []
    for episode in Store(run).episodes():
        out.append(episode)
        if len(out) >= MAX_EPISODES:
            break
    return out


def find_evals(run: Path, given: Iterable[Path] = ()) -> dict[str, dict[str, Any]]:
    """Evaluation summaries by label: the given directories, else RUN/eval/*/ and RUN itself if it is one."""
    dirs = list(given) or sorted(p for p in (run / "eval").glob("*") if (p / "eval.json").is_file())
    if not dirs and (run / "eval.json").is_file():
        dirs = [run]
    evals = {}
    for d in dirs:
        path = Path(d) / "eval.json"
        if path.is_file():
            evals[Path(d).name] = json.loads(path.read_text())
    return evals


def error_signature(text: str) -> str:
    """A tool error's kind: its first line without paths, numbers and quoted values."""
    line = next((ln for ln in text.splitlines() if ln.strip() and not ln.startswith("[exit code")), "").strip()
    if not line:
        return "non-zero exit, no output" if "[exit code" in text else "(empty error)"
    line = re.sub(r"^(main|bash|sh)(: eval)?: line \d+: ", "", line)
    line = re.sub(r"'[^']*'|`[^`]*`|\"[^\"]*\"", "'…'", line)
    line = re.sub(r"(/[\w.\-]+)+/?", "PATH", line)
    line = re.sub(r"\d+", "N", line)
    return line[:80] or "(empty error)"


def _tool_message(episode: Episode, turn: int) -> str:
    """The first tool message after the model's turn-th reply (for episodes stored before errors were)."""
    seen = 0
    for message in episode.transcript:
        seen += message.get("role") == "assistant"
        if seen == turn and message.get("role") == "tool":
            return str(message.get("content", ""))
        if seen > turn:
            break
    return "error"


def tool_errors(episodes: Iterable[Episode]) -> Counter:
    counts: Counter = Counter()
    for e in episodes:
        for call in e.tool_calls:
            if call.get("is_error"):
                text = call.get("error") or _tool_message(e, int(call.get("turn", 0)))
                counts[f"{call.get('name', '?')}: {error_signature(text)}"] += 1
        for text in e.metadata.get("format_errors", []):
            counts[f"malformed turn: {error_signature(text)}"] += 1
    return counts


# --- the tasks by pass rate table ----------------------------------------------------------


def curriculum_table(online: list[dict], shown: int = 30, columns: int = 8) -> str:
    """Tasks by estimated pass rate over time: a row per task seen (highest latest rate first), a column
    per round (up to `columns`, evenly spaced, the last included), blank before the task was seen."""
    rows = [r for r in online if "curriculum" in r and "rates" in r["curriculum"]]
    if not rows:
        return ""
    picks = sorted({rows[round(i * (len(rows) - 1) / max(columns - 1, 1))]["round"] for i in range(columns)})
    at = {r["round"]: r["curriculum"]["rates"] for r in rows}
    latest = rows[-1]["curriculum"]["rates"]
    tasks = sorted(latest, key=lambda t: (-latest[t], t))
    head = "".join(f"<th>round {n}</th>" for n in picks)
    body = []
    for task in tasks[:shown]:
        cells = []
        for n in picks:
            rate = at[n].get(task)
            shade = "" if rate is None else f" style='background: rgba(40, 160, 70, {0.1 + 0.6 * rate:.2f})'"
            cells.append(f"<td{shade}>{'' if rate is None else f'{rate:.2f}'}</td>")
        body.append(f"<tr><td>{html.escape(task)}</td>{''.join(cells)}</tr>")
    more = f"<p>and {len(tasks) - shown} more tasks seen.</p>" if len(tasks) > shown else ""
    return ("<h3>Tasks by estimated pass rate over time</h3>"
            f"<table class='curriculum'><tr><th>task</th>{head}</tr>{''.join(body)}</table>{more}")  # fmt: skip


# --- the page -----------------------------------------------------------------------------------

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ptrain report: {title}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }}
table {{ border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 14px; }}
th, td {{ border: 1px solid #ccc; padding: 4px 10px; text-align: right; }}
th:first-child, td:first-child {{ text-align: left; }}
figure {{ margin: 1em 0 2em; }} figcaption {{ color: #555; font-size: 13px; }}
.missing {{ color: #999; font-style: italic; }}
</style></head>
<body data-plots-loaded="0" data-plots-total="{plots}">
<h1>ptrain report</h1>
<p>Run <code>{title}</code>, written {when}.</p>
{body}
<script>
window.addEventListener("load", () => {{
  const imgs = Array.from(document.querySelectorAll("img.plot"));
  const ok = imgs.filter(i => i.complete && i.naturalWidth > 0).length;
  document.body.dataset.plotsLoaded = String(ok);
}});
</script>
</body></html>
"""


def _table(header: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _pct(x: float | None, ci: list[float] | None = None) -> str:
    if x is None:
        return "-"
    return f"{100 * x:.1f}%" + (f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci else "")


def _figure_html(title: str, png: bytes | None, caption: str, missing: str) -> str:
    if png is None:
        return f"<h2>{html.escape(title)}</h2><p class='missing'>{html.escape(missing)}</p>"
    data = base64.b64encode(png).decode()
    return (f"<h2>{html.escape(title)}</h2><figure><img class='plot' alt='{html.escape(title)}' "
            f"src='data:image/png;base64,{data}'><figcaption>{html.escape(caption)}</figcaption></figure>")  # fmt: skip


def build_report(run: Path, evals: Iterable[Path] = (), out: Path | None = None) -> Path:
    """Write the run's report (RUN/report.html unless `out`) and return its path."""
    import time

    from ptrain.eval import compare, task_outcomes

    run = Path(run)
    found = find_evals(run, evals)
    eval_dirs = {Path(d).name: Path(d) for d in evals} or {
        name: (run / "eval" / name if (run / "eval" / name).is_dir() else run) for name in found
    }
    sources = {"this run": episodes_of(run), **{name: episodes_of(d) for name, d in eval_dirs.items() if d != run}}
    episodes = [e for eps in sources.values() for e in eps]
    metric_files = sorted((run / "metrics").glob("rollout-*.jsonl")) + sorted(
        f for d in eval_dirs.values() if d != run for f in (d / "metrics").glob("rollout-*.jsonl")
    )
    # the rollout that kept the engine busiest (a gold replay uses none), then the longest
    timelines = {f: read_jsonl(f) for f in metric_files}
    busiest = max(timelines, key=lambda f: (engine_seconds(timelines[f]), len(timelines[f])), default=None)
    snapshots = timelines.get(busiest, [])
    train, online = read_jsonl(run / "metrics" / "train.jsonl"), read_jsonl(run / "metrics" / "online.jsonl")

    parts = []
    if found:
        rows = [[label, e["run"].get("adapter") or e["run"].get("model", "?"), e["run"].get("split", "?"), e["summary"]["tasks"],
                 e["summary"]["episodes"], _pct(e["summary"].get("pass@1"), e["summary"].get("pass@1_ci95")),
                 f"{e['summary']['mean_reward']:.3f}" if e["summary"]["mean_reward"] is not None else "-"]
                for label, e in found.items()]  # fmt: skip
        parts.append("<h2>Evaluations</h2>" + _table(
            ["evaluation", "model (or adapter)", "split", "tasks", "episodes", "pass@1 [95% CI]", "mean reward"], rows))  # fmt: skip
    if len(eval_dirs) >= 2:
        (a_name, a_dir), (b_name, b_dir) = list(eval_dirs.items())[0], list(eval_dirs.items())[-1]
        c = compare(task_outcomes(Store(a_dir)), task_outcomes(Store(b_dir)))
        rows = [[name, r["tasks"], _pct(r["pass@1_a"]), _pct(r["pass@1_b"]),
                 f"{100 * r['pass@1_diff']:+.1f} [{100 * r['pass@1_diff_ci95'][0]:+.1f}, "
                 f"{100 * r['pass@1_diff_ci95'][1]:+.1f}]", f"{r['mcnemar_p']:.3g}"]
                for name, r in [("all", c), *c["by_category"].items()] if r["tasks"]]  # fmt: skip
        parts.append(f"<h2>{html.escape(b_name)} against {html.escape(a_name)} (paired)</h2>" + _table(
            ["tasks", "n", f"pass@1 {a_name}", f"pass@1 {b_name}", "difference [95% CI], points", "McNemar p"],
            rows))  # fmt: skip
    figures = [
        ("Training", plot_training(train, online), "Mean reward (and pass rate, online) per step, and the loss.",
         "No training metrics in this run (metrics/train.jsonl, metrics/online.jsonl)."),
        ("Behaviour policy", plot_policy(train), "Per step, how far the trainer's logprobs (before the update) are "
         "from those the engine sampled with, and the policy's entropy on model tokens. Tokens sampled by the "
         "trainer's own version agree to rounding; a jump here is a contract bug, not slow learning.",
         "No GRPO steps with behaviour metrics in this run."),
        ("Before and after, by category", plot_categories(found), "pass@1 per task category for each evaluation.",
         "No evaluation runs found (RUN/eval/*/eval.json, or --eval DIR)."),
        ("Episodes", plot_lengths(sources), f"Lengths and turns of {len(episodes)} episodes: this run's and each "
         "evaluation's.",
         "No episodes in this run."),
        ("Engine and tools", plot_engine(snapshots), "From the per-second snapshots of the rollout that kept the "
         f"engine busiest ({busiest.parent.parent.name + '/' + busiest.name if busiest else '-'}).",
         "No rollout metrics in this run."),
        ("Tool errors", plot_errors(tool_errors(episodes)), "Error outputs of tool calls and malformed turns, "
         "grouped with paths and numbers removed.", "No tool errors recorded."),
    ]  # fmt: skip
    curriculum = ("Curriculum", plot_curriculum(online), "Online training's curriculum (online/curriculum.py): "
                  "each tier's mean estimated pass rate per round, the open tier (dotted), and how many settled "
                  "tasks a round's draw passed over and how many refills it took.",
                  "No curriculum in this run (curriculum = true in the train config).")  # fmt: skip
    if curriculum[1] is not None:
        figures.insert(1, curriculum)
    parts += [_figure_html(*f) + (curriculum_table(online) if f is curriculum else "") for f in figures]
    page = PAGE.format(title=html.escape(str(run)), when=time.strftime("%Y-%m-%d %H:%M"),
                       plots=sum(f[1] is not None for f in figures), body="\n".join(parts))  # fmt: skip
    out = Path(out) if out else run / "report.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page)
    return out
