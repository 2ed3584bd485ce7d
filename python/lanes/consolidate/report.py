"""summary.json, report.md and the Fig. 6/7-style plots of one cross-validation run."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np

from lanes.consolidate.cv import Grid, Key
from lanes.consolidate.packers import DELAY_PACKERS
from lanes.consolidate.paper import COLUMNS, paper_row

# Zero delays cannot sit on a log axis; they are drawn on this floor (minutes).
PLOT_FLOOR = 1e-2
HEADERS = ("avg Q", "med Q", "max Q", "avg fill", "med fill", "max fill", "% delayed", "Q when delayed")


HEADLINE_TEXT = (
    "Each delay-packing setting whose average bin delay `util` also reaches (between two of its thresholds) "
    "is set against `util` at that same average delay: `util`'s max Q and fill there are interpolated "
    "between its neighbouring thresholds (log-log). Ratio > 1: the delay packer's worst bin is lower. "
    "Paper: util 70 % gives avg 783.49, max 46706.97, fill 63.90 %; delay 1000 min at 100 % gives avg "
    "783.87, max 11596.53, fill 69.40 % (worst bin ~4x lower, fill +5.5 points)."
)


def write_summary(path: Path, meta: dict, rows: list[dict]) -> None:
    path.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n", encoding="utf-8")


def _fmt(v: float) -> str:
    if v >= 1e5:
        return f"{v:.3g}"
    return f"{v:.2f}"


def _cells(vals: list[float]) -> str:
    return " | ".join(_fmt(v) for v in vals)


def packer_table(rows: list[dict], packer: str, cores: int | str = "all", with_paper: bool = True) -> str:
    """Markdown table of one packer in the shape of Table I (utilisation) or II (delay)."""
    mine = [r for r in rows if r["packer"] == packer and r["cores"] == cores]
    is_delay = packer in DELAY_PACKERS
    mine.sort(key=lambda r: ((r["delay_limit_min_per_day"] or 0), r["threshold_pct"]))
    head = (
        ("limit (min/day) | " if is_delay else "") + "threshold | source | bins/fold | " + " | ".join(HEADERS)
    )
    lines = ["| " + head + " |", "|" + "---|" * (head.count("|") + 1)]
    for r in mine:
        lim = r["delay_limit_min_per_day"]
        lead = (f"{lim:g} | " if is_delay else "") + f"{r['threshold_pct']:g} %"
        lines.append(f"| {lead} | lanes | {r['bins_per_fold']:.1f} | {_cells([r[c] for c in COLUMNS])} |")
        paper = paper_row(packer, r["threshold_pct"], lim) if with_paper else None
        if paper:
            lines.append(
                f"| {lead} | *paper* | | *{_cells([paper[c] for c in COLUMNS]).replace(' | ', '* | *')}* |"
            )
    return "\n".join(lines)


def util_curve(rows: list[dict], base: str = "util") -> list[tuple[float, float, float]]:
    """(avg Q, max Q, avg fill) of the baseline's pooled rows with some delay, by increasing avg Q."""
    pts = [
        (r["delay_avg_min"], r["delay_max_min"], r["fill_avg_pct"])
        for r in rows
        if r["packer"] == base and r["cores"] == "all" and r["delay_avg_min"] > 0 and r["delay_max_min"] > 0
    ]
    pts.sort()
    # Keep a curve that rises in avg Q (a higher threshold may by chance give a lower average).
    out: list[tuple[float, float, float]] = []
    for p in pts:
        if not out or p[0] > out[-1][0]:
            out.append(p)
    return out


def at_same_delay(curve: list[tuple[float, float, float]], avg: float) -> tuple[float, float] | None:
    """The baseline's max Q and fill at average delay `avg`: log-log interpolation between its
    thresholds; None outside the range it covers."""
    if avg <= 0 or len(curve) < 2 or not curve[0][0] <= avg <= curve[-1][0]:
        return None
    for (a0, m0, f0), (a1, m1, f1) in itertools.pairwise(curve):
        if a0 <= avg <= a1:
            w = (math.log(avg) - math.log(a0)) / (math.log(a1) - math.log(a0))
            return math.exp(math.log(m0) + w * (math.log(m1) - math.log(m0))), f0 + w * (f1 - f0)
    return None


def headline_pairs(rows: list[dict], packer: str, base: str = "util") -> list[dict]:
    """Each pooled row of `packer` whose average delay the baseline also reaches, with the baseline's
    max Q and fill at that same average delay and the ratio of the maxima (> 1: packer's worst bin lower)."""
    curve = util_curve(rows, base)
    out = []
    for r in rows:
        if r["packer"] != packer or r["cores"] != "all":
            continue
        same = at_same_delay(curve, r["delay_avg_min"])
        if same is None or r["delay_max_min"] <= 0:
            continue
        out.append(
            {
                **r,
                "base_max_min": same[0],
                "base_fill_pct": same[1],
                "max_ratio": same[0] / r["delay_max_min"],
            }
        )
    out.sort(key=lambda r: r["delay_avg_min"])
    return out


def headline(rows: list[dict], base: str = "util", others: tuple[str, ...] = ("delay",)) -> str:
    """Markdown: every delay-packing setting next to utilisation packing at the same average delay."""
    lines = [
        (
            f"| packer | limit (min/day) | threshold | avg Q | max Q | avg fill | {base} max Q at same avg Q "
            f"| {base} fill at same avg Q | max Q ratio |"
        ),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    summary = []
    for name in others:
        pairs = headline_pairs(rows, name, base)
        for r in pairs:
            lines.append(
                f"| {name} | {r['delay_limit_min_per_day']:g} | {r['threshold_pct']:g} % | {_fmt(r['delay_avg_min'])} "
                f"| {_fmt(r['delay_max_min'])} | {r['fill_avg_pct']:.1f} | {_fmt(r['base_max_min'])} "
                f"| {r['base_fill_pct']:.1f} | {r['max_ratio']:.1f} |"
            )
        if pairs:
            ratios = sorted(r["max_ratio"] for r in pairs)
            gain = float(np.median([r["fill_avg_pct"] - r["base_fill_pct"] for r in pairs]))
            summary.append(
                f"`{name}`: {len(pairs)} settings within `{base}`'s range of average delay; `{base}`'s worst "
                f"bin / `{name}`'s worst bin = {ratios[len(ratios) // 2]:.1f} (median; range "
                f"{ratios[0]:.1f}-{ratios[-1]:.1f}; > 1: `{name}` lower), fill {gain:+.1f} points (median)."
            )
    if not summary:
        return f"No delay-packing setting reaches an average delay within `{base}`'s range."
    return "\n".join(["- " + s for s in summary] + [""] + lines)


def plot_packer(merged: dict[Key, list], grid: Grid, packer: str, path: Path, title: str) -> None:
    """Bin fill vs bin delay (log), one panel per threshold (and per limit for delay packers)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import LogLocator, NullLocator

    limits: list[float | None] = list(grid.limits) if packer in DELAY_PACKERS else [None]
    thresholds = grid.thresholds_for(packer)
    nrow, ncol = len(limits), len(thresholds)
    fig, axes = plt.subplots(
        nrow, ncol, figsize=(2.3 * ncol + 1, 2.1 * nrow + 0.8), sharex=True, sharey=True, squeeze=False
    )
    markers = ("o", "s", "^", "D", "v")
    top = PLOT_FLOOR  # one y range for all panels, set before drawing (all-zero panels are not singular)
    for lim in limits:
        for th in thresholds:
            for cores in grid.cores:
                for f in merged.get((packer, cores, th, lim), []):
                    top = max(top, float(f[1].max()) if f[1].size else 0.0)
    for i, lim in enumerate(limits):
        for j, th in enumerate(thresholds):
            ax = axes[i][j]
            ax.set_yscale("log")
            ax.set_ylim(PLOT_FLOOR / 2, top * 3)
            # Few ticks: matplotlib's default minor log ticks over many decades make layout very slow.
            ax.yaxis.set_major_locator(LogLocator(numticks=5))
            ax.yaxis.set_minor_locator(NullLocator())
            fills, delays = [], []
            for k, cores in enumerate(grid.cores):
                folds = merged.get((packer, cores, th, lim), [])
                if not folds:
                    continue
                fill = np.concatenate([f[2] for f in folds])
                delay = np.concatenate([f[1] for f in folds])
                fills.append(fill)
                delays.append(delay)
                ax.scatter(
                    fill,
                    np.maximum(delay, PLOT_FLOOR),
                    s=9,
                    alpha=0.5,
                    marker=markers[k % len(markers)],
                    label=f"{cores} cores",
                )
            if fills:
                f, d = np.concatenate(fills), np.concatenate(delays)
                ax.axvline(f.mean(), color="k", lw=0.8)
                ax.axvline(np.median(f), color="k", lw=0.8, alpha=0.5)
                ax.axhline(max(d.mean(), PLOT_FLOOR), color="k", lw=0.8, ls="--")
                ax.axhline(max(float(np.median(d)), PLOT_FLOOR), color="k", lw=0.8, ls="--", alpha=0.5)
            label = f"{th * 100:g} %" + (f", {lim:g} min/day" if lim is not None else "")
            ax.set_title(label, fontsize=8)
            ax.tick_params(labelsize=7)
            if i == nrow - 1:
                ax.set_xlabel("bin fill (%)", fontsize=8)
            if j == 0:
                ax.set_ylabel("bin delay (min/day)", fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="upper right", fontsize=8)
    fig.suptitle(f"{title}: {packer} packing (zero delay drawn at {PLOT_FLOOR:g})", fontsize=10)
    # Fixed margins: tight_layout measures every tick label and costs more than the drawing.
    w, h = fig.get_size_inches()
    fig.subplots_adjust(
        left=0.75 / w, right=1 - 0.9 / w, bottom=0.55 / h, top=1 - 0.75 / h, wspace=0.08, hspace=0.3
    )
    fig.savefig(path, dpi=90)
    plt.close(fig)


def render(meta: dict, rows: list[dict], plots: dict[str, str]) -> str:
    """report.md of one run: data, tables next to the paper, headline, plots."""
    out = [f"# Delay-aware consolidation: {meta['title']}", ""]
    out.append(
        f"Data `{meta['data']}`: {meta['days']} days, {meta['vms']} VMs (present on >= {meta['min_days']} "
        f"days), {meta['step_s']:g} s samples. Leave-one-day-out cross-validation ({meta['days']} folds); "
        f"each point is one bin on one test day. Cores {meta['cores']}, thresholds {meta['thresholds']} % "
        f"(delay packers: {meta.get('delay_thresholds') or meta['thresholds']} %), "
        f"accepted delay {meta['limits']} min per bin per day. Cross-validation took {meta['elapsed_s']:.1f} s "
        f"(delay packers in {meta.get('engine', 'numpy')})."
    )
    out.append("")
    out.append(
        "Delay unit: Q is the sum over each minute of the day of the current delay w(t) = q(t)/C "
        "(minutes of waiting for new work), per bin per test day; fill is average demand / capacity. "
        "'Q when delayed' is the mean of w over a bin's delayed samples (0 for a bin never delayed), "
        "averaged over bins. Tables pool 12/16/32-core bins as the paper does; *paper* rows are the "
        "published Tables I and II (UiO data, 1-minute samples, 13 days)."
    )
    for packer in meta["packers"]:
        kind = (
            "Table II shape (delay packing)"
            if packer in DELAY_PACKERS
            else "Table I shape (utilisation packing)"
        )
        out += ["", f"## `{packer}`: {kind}", "", packer_table(rows, packer)]
        if packer in plots:
            out += ["", f"![{packer}]({plots[packer]})"]
    others = tuple(p for p in meta["packers"] if p in DELAY_PACKERS)
    if "util" in meta["packers"] and others:
        out += [
            "",
            "## Headline: utilisation vs delay packing at comparable average delay",
            "",
            HEADLINE_TEXT,
            "",
            headline(rows, "util", others),
        ]
    out += ["", "## Per core count", ""]
    for packer in meta["packers"]:
        for cores in meta["cores"]:
            out += [f"### `{packer}`, {cores}-core bins", "", packer_table(rows, packer, cores, False), ""]
    return "\n".join(out) + "\n"
