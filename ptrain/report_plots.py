"""The report's plots (`ptrain/report.py`): each a PNG as bytes (matplotlib, Agg backend), or None
when the run holds no data for it, so the page can say what is missing."""

from __future__ import annotations

import io
from collections import Counter
from typing import Any

import numpy as np

from ptrain.episode import Episode


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
        left.plot(
            x,
            [np.nan if r.get("pass_rate") is None else r["pass_rate"] for r in rows],
            marker="s",
            ls="--",
            label="pass rate",
        )
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


def engine_seconds(snapshots: list[dict]) -> float:
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
