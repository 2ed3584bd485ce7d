"""Plots of a simulation result: throughput per flow over time and port utilisation."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def plot_result(result: dict, path: Path, title: str = "") -> None:
    intervals = result["intervals"]
    t = [iv["t_s"] + result["interval_s"] for iv in intervals]
    fig, (ax_bw, ax_util) = plt.subplots(2, 1, figsize=(8, 6), sharex=True, height_ratios=[3, 1])
    for name, flow in result["flows"].items():
        mbps = [iv["flows_bps"][name] / 1e6 for iv in intervals]
        p99 = flow["delay_ns"]["p99"] / 1e3
        ax_bw.plot(t, mbps, label=f"{name} (q{flow['queue']}, p99 queueing {p99:.1f} µs)")
    ax_bw.set_ylabel("throughput (Mb/s)")
    ax_bw.grid(alpha=0.3)
    ax_bw.legend(fontsize=8)
    for name in result["ports"]:
        ax_util.plot(t, [100 * iv["ports_utilisation"][name] for iv in intervals], label=name)
    ax_util.set_ylabel("utilisation (%)")
    ax_util.set_xlabel("time (s)")
    ax_util.set_ylim(0, 105)
    ax_util.grid(alpha=0.3)
    schedulers = ", ".join(f"{n}: {p['scheduler']}" for n, p in result["ports"].items())
    fig.suptitle(f"{title} ({schedulers})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
