"""The learning figures over seeds: each learn_demo (or quickstart) run's paired comparisons, then the
median and range over seeds, as the README and docs/training.md print them.

    python scripts/learn_table.py                       # every runs/learn-*-s* directory
    python scripts/learn_table.py runs/learn-cad-s0 runs/learn-cad-s1
    python scripts/learn_table.py --quickstart          # runs/quickstart, runs/quickstart-s1, ...
    python scripts/learn_table.py --plot docs/learn_cad.png runs/learn-cad-s*   # the curves of those runs

A run counts once its comparisons are written (scripts/learn_demo's last stage: compare-*.json); the
quickstart's are computed here from its two evaluations. Every figure is a held-out pass@1 (or mean
reward) in points, with the paired 95% bootstrap interval and McNemar's p of the stage's own gain.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from collections import defaultdict
from pathlib import Path

from ptrain.eval import compare, task_outcomes
from ptrain.store import Store


def comparison(run: Path, name: str) -> dict | None:
    path = run / f"compare-{name}.json"
    return json.loads(path.read_text()) if path.is_file() else None


def quickstart_comparison(run: Path) -> dict | None:
    a, b = run / "eval" / "1-base", run / "eval" / "2-trained"
    if not (a.is_dir() and b.is_dir()):
        return None
    return compare(task_outcomes(Store(a)), task_outcomes(Store(b)))


def points(x: float) -> str:
    return f"{100 * x:+.1f}"


def gain(c: dict, key: str = "pass@1") -> str:
    lo, hi = c[f"{key}_diff_ci95"] if key == "pass@1" else c["reward_diff_ci95"]
    diff = c["pass@1_diff"] if key == "pass@1" else c["reward_diff"]
    if key == "pass@1":
        return f"{points(diff)} [{points(lo)}, {points(hi)}] (p = {c['mcnemar_p']:.2g})"
    return f"{diff:+.3f} [{lo:+.3f}, {hi:+.3f}]"


def spread(values: list[float], scale: float = 100.0, fmt: str = "{:.1f}") -> str:
    """Median and range: `m (lo to hi)`; one value alone."""
    values = [scale * v for v in values]
    if len(values) == 1:
        return fmt.format(values[0])
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))} to {fmt.format(max(values))})"


def learn_rows(runs: list[Path]) -> None:
    by_pack: dict[str, list[tuple[Path, dict, dict]]] = defaultdict(list)
    for run in runs:
        warm, grpo = comparison(run, "warm"), comparison(run, "grpo")
        match = re.match(r"learn-(.+)-s\d+$", run.name)
        if warm and grpo and match:
            by_pack[match.group(1)].append((run, warm, grpo))
    print("| run | base | warm start | GRPO | GRPO - warm start [95% CI] (McNemar p) | reward: GRPO - warm start |")
    print("|---|---|---|---|---|---|")
    for _, rows in sorted(by_pack.items()):
        for run, warm, grpo in rows:
            print(f"| {run.name} | {100 * warm['pass@1_a']:.1f}% | {100 * grpo['pass@1_a']:.1f}% | "
                  f"{100 * grpo['pass@1_b']:.1f}% | {gain(grpo)} | {gain(grpo, 'reward')} |")  # fmt: skip
    print()
    print("| taskpack | seeds | base | warm start | GRPO | GRPO's own gain (points) | every interval above 0 |")
    print("|---|---|---|---|---|---|---|")
    for pack, rows in sorted(by_pack.items()):
        warms, grpos = [w for _, w, _ in rows], [g for _, _, g in rows]
        above = all(g["pass@1_diff_ci95"][0] > 0 for g in grpos)
        print(f"| {pack} | {len(rows)} | {spread([w['pass@1_a'] for w in warms])}% | "
              f"{spread([g['pass@1_a'] for g in grpos])}% | {spread([g['pass@1_b'] for g in grpos])}% | "
              f"{spread([g['pass@1_diff'] for g in grpos], fmt='{:+.1f}')} | {'yes' if above else 'no'} |")  # fmt: skip


def plot(runs: list[Path], out: Path) -> None:
    """Each run's GRPO rounds (training reward and pass rate; each round is other tasks, so it is
    noisy) beside its held-out pass@1 of base, warm start and GRPO with their 95% intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (curve, bars) = plt.subplots(1, 2, figsize=(10, 3.6), gridspec_kw={"width_ratios": [3, 2]})
    width = 0.8 / max(len(runs), 1)
    for i, run in enumerate(runs):
        rounds = [json.loads(line) for line in (run / "grpo" / "metrics" / "online.jsonl").read_text().splitlines()]
        x = [r["round"] for r in rounds]
        (line,) = curve.plot(x, [r["reward_mean"] for r in rounds], marker="o", ms=3, label=f"{run.name} reward")
        curve.plot(
            x,
            [float("nan") if r["pass_rate"] is None else r["pass_rate"] for r in rounds],
            ls=":",
            color=line.get_color(),
            label=f"{run.name} pass rate",
        )
        for j, stage in enumerate(("eval-base", "eval-warm", "eval-grpo")):
            summary = json.loads((run / stage / "eval.json").read_text())["summary"]
            lo, hi = summary["pass@1_ci95"]
            bars.bar(j + (i - (len(runs) - 1) / 2) * width, 100 * summary["pass@1"], width, color=line.get_color(),
                     yerr=[[100 * (summary["pass@1"] - lo)], [100 * (hi - summary["pass@1"])]], capsize=3,
                     label=run.name if j == 0 else None)  # fmt: skip
    curve.set(xlabel="GRPO round", ylabel="training reward / pass rate", ylim=(0, 1), title="online GRPO")
    curve.legend(fontsize=7)
    bars.set(xticks=range(3), xticklabels=["base", "warm start", "GRPO"], ylabel="held-out pass@1 (%)",
             ylim=(0, 100), title="held out, 95% intervals")  # fmt: skip
    bars.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


def quickstart_rows(runs: list[Path]) -> None:
    found = [(run, c) for run in runs if (c := quickstart_comparison(run))]
    print("| run | tasks | base | trained | trained - base [95% CI] (McNemar p) |")
    print("|---|---|---|---|---|")
    for run, c in found:
        print(f"| {run.name} | {c['tasks']} | {100 * c['pass@1_a']:.1f}% | {100 * c['pass@1_b']:.1f}% | {gain(c)} |")
    if found:
        diffs = [c["pass@1_diff"] for _, c in found]
        lows = [c["pass@1_diff_ci95"][0] for _, c in found]
        print(f"\nmedian and range over {len(found)} seeds: {spread(diffs, fmt='{:+.1f}')} points; "
              f"lower interval ends {spread(lows, fmt='{:+.1f}')}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", type=Path)
    parser.add_argument("--quickstart", action="store_true", help="the quickstart's runs instead of learn_demo's")
    parser.add_argument("--plot", type=Path, help="draw the runs' GRPO curves and held-out pass@1 into this PNG")
    args = parser.parse_args()
    if args.plot:
        plot(args.runs or sorted(Path("runs").glob("learn-*-s*")), args.plot)
    elif args.quickstart:
        quickstart_rows(
            args.runs or sorted(Path("runs").glob("quickstart")) + sorted(Path("runs").glob("quickstart-s*[0-9]"))
        )
    else:
        learn_rows(args.runs or sorted(Path("runs").glob("learn-*-s*")))


if __name__ == "__main__":
    main()
