"""`ptrain report RUN`: one self-contained HTML file with the run's numbers and plots.

The page needs nothing but itself: every plot is a PNG (matplotlib, Agg backend) embedded as a data
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
import io
import json
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ptrain.episode import Episode
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


# --- plots --------------------------------------------------------------------------------------


def _figure(width: float = 7.0, height: float = 3.2, ncols: int = 1):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, ncols, figsize=(width, height), dpi=100, squeeze=False)
    return fig, list(axes[0])


def _png(fig) -> bytes:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def plot_training(train: list[dict], online: list[dict]) -> bytes | None:
    """Reward and pass rate (online rounds) or reward (offline steps), and the loss, over training."""
    rows = online or train
    if not rows:
        return None
    x_name = "round" if online else "step"
    rewards = [r.get("reward_mean") for r in rows]
    if not online and all(v is None for v in rewards):  # supervised steps: only a loss
        fig, (right,) = _figure(width=4.0)
        right.plot([r[x_name] for r in rows], [r["loss"] for r in rows], color="tab:red", marker=".")
        right.set(xlabel=x_name, title=f"loss ({rows[-1].get('algo', 'sft')})")
        return _png(fig)
    fig, (left, right) = _figure(ncols=2)
    x = [r[x_name] for r in rows]
    if any(v is not None for v in rewards):
        left.plot(x, [np.nan if v is None else v for v in rewards], marker="o", label="mean reward")
    if online:
        left.plot(x, [r.get("pass_rate", np.nan) for r in rows], marker="s", ls="--", label="pass rate")
    left.set(xlabel=x_name, ylim=(-0.02, 1.02), title="reward over training")
    left.legend(loc="upper left", fontsize=8)
    losses = [(r[x_name], r["loss"]) for r in (online or train) if r.get("loss") is not None]
    if losses:
        right.plot(*zip(*losses, strict=True), color="tab:red", marker=".")
    right.set(xlabel=x_name, title="loss")
    return _png(fig)


def plot_policy(train: list[dict]) -> bytes | None:
    """Trainer vs behaviour logprobs per step (mean and max |log-ratio|, k3 KL), and entropy, clipped and capped."""
    rows = [r for r in train if r.get("algo") == "grpo" and "mismatch_k3" in r]
    if not rows:
        return None
    fig, (left, right) = _figure(ncols=2)
    x = [r["step"] for r in rows]
    for key, label, style in (("mismatch", "mean |log ratio|", "o-"), ("mismatch_max", "max |log ratio|", "^--"),
                              ("mismatch_k3", "k3 KL(behaviour || trainer)", "s:")):  # fmt: skip
        left.plot(x, [max(r.get(key) or 0.0, 1e-9) for r in rows], style, label=label, ms=3)
    left.set(xlabel="step", yscale="log", title="trainer vs sampled logprobs")
    left.legend(loc="upper left", fontsize=7)
    right.plot(x, [r.get("entropy", np.nan) for r in rows], "o-", ms=3, label="entropy (nats / token)")
    twin = right.twinx()
    twin.plot(x, [r.get("clipped", np.nan) for r in rows], "s--", ms=3, color="tab:red", label="clipped")
    twin.plot(x, [r.get("capped", np.nan) for r in rows], "^:", ms=3, color="tab:purple", label="capped")
    twin.set(ylabel="fraction of tokens", ylim=(0, 1))
    right.set(xlabel="step", title="policy entropy, clip and cap")
    right.legend(loc="upper left", fontsize=7)
    twin.legend(loc="upper right", fontsize=7)
    return _png(fig)


def plot_categories(evals: dict[str, dict[str, Any]]) -> bytes | None:
    """pass@1 by category, one bar per evaluation, with 95% intervals."""
    if not evals:
        return None
    categories = sorted({c for e in evals.values() for c in e["summary"]["by_category"]})
    fig, (ax,) = _figure(width=max(5.0, 1.6 * len(categories) + 2))
    width = 0.8 / len(evals)
    for i, (label, e) in enumerate(evals.items()):
        blocks = [e["summary"]["by_category"].get(c) for c in categories]
        values = [b["pass@1"] if b else 0.0 for b in blocks]
        lo = [v - b["pass@1_ci95"][0] if b else 0.0 for v, b in zip(values, blocks, strict=True)]
        hi = [b["pass@1_ci95"][1] - v if b else 0.0 for v, b in zip(values, blocks, strict=True)]
        xs = np.arange(len(categories)) + (i - (len(evals) - 1) / 2) * width
        ax.bar(xs, values, width, yerr=[lo, hi], capsize=3, label=label)
    ax.set_xticks(np.arange(len(categories)), categories, rotation=20, ha="right", fontsize=8)
    ax.set(ylabel="pass@1", ylim=(0, 1.05), title="pass@1 by category (95% bootstrap intervals)")
    ax.legend(fontsize=8)
    return _png(fig)


def plot_lengths(sources: dict[str, list[Episode]]) -> bytes | None:
    """Histograms of episode length and turns, one series per source (the run, each evaluation)."""
    scored = {name: [e for e in eps if e.status != "error"] for name, eps in sources.items()}
    scored = {name: eps for name, eps in scored.items() if eps}
    if not scored:
        return None
    fig, (left, right) = _figure(ncols=2)
    lengths = {name: [e.num_tokens for e in eps] for name, eps in scored.items()}
    turns = {name: [int(e.metadata.get("turns", 0)) for e in eps] for name, eps in scored.items()}
    top = max(max(t) for t in turns.values())
    left.hist(list(lengths.values()), bins=30, label=list(lengths), histtype="step", linewidth=1.5)
    left.set(xlabel="tokens per episode", ylabel="episodes", title="episode length")
    right.hist(list(turns.values()), bins=np.arange(0, top + 2) - 0.5, label=list(turns), rwidth=0.8)
    right.set(xlabel="model turns", title="turns per episode")
    left.legend(fontsize=7)
    return _png(fig)


def plot_engine(snapshots: list[dict]) -> bytes | None:
    """Episodes at the engine and in tools, and the engine's busy share, second by second."""
    rows = [s for s in snapshots if s.get("kind") == "snapshot"]
    if len(rows) < 2:
        return None
    t = np.array([r["time"] for r in rows]) - rows[0]["time"]
    busy = np.array([r.get("engine_busy_s_total", 0.0) for r in rows])
    lag = min(10, len(rows) - 1)  # over 10-second windows: the engine's counter moves in whole steps
    share = np.clip((busy[lag:] - busy[:-lag]) / np.maximum(t[lag:] - t[:-lag], 1e-9), 0, 1)
    fig, (left, right) = _figure(ncols=2)
    left.plot(t, [r.get("in_generate", 0) for r in rows], label="waiting on the engine")
    left.plot(t, [r.get("in_tools", 0) for r in rows], label="in tools")
    left.set(xlabel="seconds", ylabel="episodes", title="where episodes are")
    left.legend(fontsize=8)
    right.plot(t[lag:], share, color="tab:purple")
    right.set(xlabel="seconds", ylim=(-0.02, 1.02), title=f"engine busy share ({lag} s windows)")
    return _png(fig)


def _engine_seconds(snapshots: list[dict]) -> float:
    return max((s.get("engine_busy_s_total", 0.0) for s in snapshots if s.get("kind") == "snapshot"), default=0.0)


def plot_errors(counts: Counter, top: int = 10) -> bytes | None:
    if not counts:
        return None
    common = counts.most_common(top)[::-1]
    fig, (ax,) = _figure(width=9.0, height=0.35 * len(common) + 1.2)
    ax.barh([k for k, _ in common], [v for _, v in common], color="tab:orange")
    ax.tick_params(axis="y", labelsize=7)
    ax.set(xlabel="occurrences", title=f"most common tool errors (of {sum(counts.values())})")
    return _png(fig)


def plot_curriculum(online: list[dict]) -> bytes | None:
    """Each tier's mean estimated pass rate per round, the open tier shaded, and the settled tasks skipped."""
    rows = [r for r in online if "curriculum" in r]
    if not rows:
        return None
    fig, (left, right) = _figure(ncols=2)
    x = [r["round"] for r in rows]
    tiers = list(rows[-1]["curriculum"]["tiers"])
    for tier in tiers:
        rates = [r["curriculum"]["tiers"].get(tier, {}).get("pass_rate") for r in rows]
        left.plot(x, [np.nan if v is None else v for v in rates], "o-", ms=3, label=tier)
    open_tier = [tiers.index(r["curriculum"]["tier"]) if r["curriculum"]["tier"] in tiers else 0 for r in rows]
    twin = left.twinx()
    twin.step(x, open_tier, where="post", color="grey", linestyle=":", label="open tier")
    twin.set(yticks=range(len(tiers)), yticklabels=tiers, ylim=(-0.5, len(tiers) - 0.5))
    left.set(xlabel="round", ylabel="mean estimated pass rate", ylim=(-0.02, 1.02), title="tiers")
    left.legend(loc="upper left", fontsize=7)
    reasons = sorted({why for r in rows for why in r["curriculum"].get("skipped", {})})
    for why in reasons:
        right.plot(x, [r["curriculum"]["skipped"].get(why, 0) for r in rows], "s-", ms=3, label=why)
    right.plot(x, [r.get("refills", 0) for r in rows], "^--", ms=3, label="refills")
    right.set(xlabel="round", ylabel="tasks", title="settled tasks passed over, and refills")
    right.legend(fontsize=7)
    return _png(fig)


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
    busiest = max(timelines, key=lambda f: (_engine_seconds(timelines[f]), len(timelines[f])), default=None)
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
