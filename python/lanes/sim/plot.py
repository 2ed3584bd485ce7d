"""Plots of a simulation result: throughput per flow over time, port utilisation, and each
flow's queueing delay percentiles."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def plot_result(result: dict, path: Path, title: str = "") -> None:
    intervals = result["intervals"]
    flows = result["flows"]
    t = [iv["t_s"] + result["interval_s"] for iv in intervals]
    fig = plt.figure(figsize=(11, 6))
    grid = fig.add_gridspec(2, 2, width_ratios=[3, 2], height_ratios=[3, 1])
    ax_bw, ax_util, ax_delay = (
        fig.add_subplot(grid[0, 0]),
        fig.add_subplot(grid[1, 0]),
        fig.add_subplot(grid[:, 1]),
    )
    for name, flow in flows.items():
        ax_bw.plot(t, [iv["flows_bps"][name] / 1e6 for iv in intervals], label=f"{name} (q{flow['queue']})")
    ax_bw.set_ylabel("throughput (Mb/s)")
    ax_bw.grid(alpha=0.3)
    ax_bw.legend(fontsize=7, ncol=2)
    for name in result["ports"]:
        ax_util.plot(t, [100 * iv["ports_utilisation"][name] for iv in intervals], label=name)
    ax_util.set_ylabel("utilisation (%)")
    ax_util.set_xlabel("time (s)")
    ax_util.set_ylim(0, 105)
    ax_util.grid(alpha=0.3)

    names = list(flows)
    y = range(len(names))
    for key, offset, color in [("p50", -0.2, "tab:blue"), ("p99", 0.2, "tab:red")]:
        # a floor of 1 ns keeps zero delays visible on the log axis
        values = [max(flows[n]["delay_ns"][key], 1) / 1e3 for n in names]
        ax_delay.barh([i + offset for i in y], values, height=0.4, color=color, label=key)
    ax_delay.set_yticks(list(y), names, fontsize=8)
    ax_delay.invert_yaxis()
    ax_delay.set_xscale("log")
    ax_delay.set_xlabel("queueing delay (µs, log)")
    ax_delay.grid(alpha=0.3, axis="x")
    ax_delay.legend(fontsize=8)

    schedulers = ", ".join(f"{n}: {p['scheduler']}" for n, p in result["ports"].items())
    fig.suptitle(f"{title} ({schedulers})")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
