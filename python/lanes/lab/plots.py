"""PNG plots of one run in the style of the thesis's figures 7.x: bandwidth per host over time,
UDP loss and one-way latency over time, MPI ping-pong latency per message size."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import matplotlib

with warnings.catch_warnings():  # Debian's and pip's matplotlib side by side warn about Axes3D
    warnings.simplefilter("ignore")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

COLORS = {"high": "tab:red", "medium": "tab:blue", "low": "tab:green", "other": "tab:gray"}


def _phase_lines(ax, summary: dict) -> None:
    for ph in summary["phases"][1:]:
        ax.axvline(ph["start_s"], color="k", linestyle=":", linewidth=0.8)


def _title(summary: dict, what: str) -> str:
    q = summary["params"]
    return f"{what}: {q['topo']} {q['case']} {q['alg']} {q['proto'].upper()} {q['link_mbps']:g} Mb/s"


def _series_plot(out: Path, summary: dict, series: dict, field: str, ylabel: str, name: str) -> None:
    fig, ax = plt.subplots(figsize=(7, 3.6))
    drawn = False
    for key, rows in series.items():
        pts = [(r["t"], r[field]) for r in rows if r.get(field) is not None]
        if not pts:
            continue
        cls = summary["flows"].get(key, {}).get("class", "other")
        ax.plot(*zip(*pts, strict=True), label=f"{key} ({cls})", color=COLORS.get(cls), linewidth=1.2)
        drawn = True
    if not drawn:
        plt.close(fig)
        return
    _phase_lines(ax, summary)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.set_title(_title(summary, ylabel.split(" (")[0]), fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(out / name, dpi=110)
    plt.close(fig)


def plot_run(out: Path, summary: dict) -> None:
    series = json.loads((out / "series.json").read_text())
    _series_plot(out, summary, series, "mbps", "bandwidth (Mb/s)", "bandwidth.png")
    _series_plot(out, summary, series, "loss_pct", "UDP loss (%)", "loss.png")
    _series_plot(out, summary, series, "owd_ms", "UDP one-way latency (ms)", "latency.png")
    mpi = summary.get("mpi")
    if mpi and mpi.get("latency_us"):
        sizes = sorted(mpi["latency_us"], key=int)
        fig, ax = plt.subplots(figsize=(6, 3.6))
        ax.plot([int(s) for s in sizes], [mpi["latency_us"][s] for s in sizes], marker="o")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("ping-pong latency (us)")
        ax.set_title(_title(summary, "MPI ping-pong"), fontsize=9)
        ax.grid(alpha=0.3, which="both")
        fig.tight_layout()
        fig.savefig(out / "mpi.png", dpi=110)
        plt.close(fig)
