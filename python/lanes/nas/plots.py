"""goodput.png of a nas run: goodput per flow over time, phases shaded, the mechanism's events
marked (demote: red dashed, restore: green dotted), the calibrated ceiling as a line."""

from __future__ import annotations

import warnings
from pathlib import Path

import matplotlib

with warnings.catch_warnings():  # Debian's and pip's matplotlib side by side warn about Axes3D
    warnings.simplefilter("ignore")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

COLORS = {"victim": "goldenrod", "up": "tab:blue", "down": "tab:red"}


def plot_goodput(out: Path, summary: dict) -> Path:
    fig, ax = plt.subplots(figsize=(8, 3.8))
    for i, ph in enumerate(summary["phases"]):
        if i % 2:
            ax.axvspan(ph["start_s"], ph["end_s"], color="0.93", linewidth=0)
        ax.text((ph["start_s"] + ph["end_s"]) / 2, 1.01, ph["name"], transform=ax.get_xaxis_transform(),
                ha="center", va="bottom", fontsize=8)  # fmt: skip
    totals: dict[float, float] = {}  # interval start -> sum over flows
    for role, ivs in summary["series"].items():
        xs: list[float] = []
        ys: list[float] = []
        for a, b, m in ivs:
            totals[round(a, 1)] = totals.get(round(a, 1), 0.0) + m
            if xs and a - xs[-1] > 1.0:  # the flow paused: no line across the pause
                xs.append(float("nan"))
                ys.append(float("nan"))
            xs.append((a + b) / 2)
            ys.append(m)
        flow = summary["flows"].get(role, {}).get("key", "")
        if xs:
            ax.plot(xs, ys, marker=".", label=f"{role} {flow}", color=COLORS.get(role))
    if totals:
        ts = sorted(totals)
        ax.plot([t + 0.5 for t in ts], [totals[t] for t in ts], color="k", linewidth=1, label="total")
    if summary.get("ceiling_mbps"):
        ax.axhline(summary["ceiling_mbps"], color="k", linestyle="--", linewidth=0.8, label="ceiling")
    for ev in summary["events"]:
        style = ("tab:red", "--") if ev["kind"] == "demote" else ("tab:green", ":")
        ax.axvline(ev["t"], color=style[0], linestyle=style[1], linewidth=1.2)
    q = summary["params"]
    ax.set_title(f"{q['topo']} {q['alg']} {q['proto'].upper()}", fontsize=10, pad=14)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("goodput (Mb/s)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    path = out / "goodput.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
