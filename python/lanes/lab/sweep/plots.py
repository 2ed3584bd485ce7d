"""Figures of a sweep laid out like the thesis's: per topology and case, a grid of TCP/UDP (rows)
by algorithm (columns) of each flow's throughput over time; per topology, MPI ping-pong latency
against message size with the algorithms overlaid, one panel per load protocol."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import matplotlib

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

from lanes.lab.plots import COLORS

ALG_COLORS = {"no": "tab:gray", "strict": "tab:orange", "rlsp-drr": "tab:purple"}
DPI = 90


def _load(run: Path) -> tuple[dict, dict]:
    s = json.loads((run / "summary.json").read_text())
    p = run / "series.json"
    return s, (json.loads(p.read_text()) if p.exists() else {})


def throughput_grid(rows: list[dict], topo: str, case: str, algs: list[str], protos: list[str],
                    path: Path) -> Path | None:  # fmt: skip
    """One figure: protos x algs panels of per-flow throughput over time (first run of each cell)."""
    cells = {(r["proto"], r["alg"]): r for r in rows if r["topo"] == topo and r["case"] == case}
    if not cells:
        return None
    protos = [p for p in protos if any(k[0] == p for k in cells)]
    fig, axes = plt.subplots(len(protos), len(algs), figsize=(3.4 * len(algs), 2.5 * len(protos)),
                             squeeze=False, sharex=True, sharey=True)  # fmt: skip
    for i, proto in enumerate(protos):
        for j, alg in enumerate(algs):
            ax = axes[i][j]
            ax.set_title(f"{proto.upper()}, {alg}", fontsize=9)
            ax.grid(alpha=0.3)
            if i == len(protos) - 1:
                ax.set_xlabel("time (s)", fontsize=8)
            if j == 0:
                ax.set_ylabel("Mb/s", fontsize=8)
            ax.tick_params(labelsize=7)
            r = cells.get((proto, alg))
            if r is None:
                ax.text(0.5, 0.5, "not run", ha="center", va="center", transform=ax.transAxes, fontsize=8)
                continue
            s, series = _load(Path(r["runs"][0]))
            for key, pts in series.items():
                xy = [(p["t"], p["mbps"]) for p in pts]
                if xy:
                    cls = s["flows"].get(key, {}).get("class", "other")
                    ax.plot(*zip(*xy, strict=True), color=COLORS.get(cls), linewidth=1, label=f"{key} ({cls})")
            for ph in s["phases"][1:]:
                ax.axvline(ph["start_s"], color="k", linestyle=":", linewidth=0.8)
    handles, labels = next(((a.get_legend_handles_labels()) for a in axes.flat if a.lines), ([], []))
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=min(6, len(labels)), fontsize=7, frameon=False)
    r0 = next(iter(cells.values()))
    fig.suptitle(f"{topo} {case}: throughput per flow, {r0['link_mbps']:g} Mb/s links, {r0['duration_s']:g} s",
                 fontsize=10)  # fmt: skip
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def mpi_curves(rows: list[dict], topo: str, algs: list[str], protos: list[str], path: Path) -> Path | None:
    """One figure: per load protocol, ping-pong latency vs message size, algorithms overlaid
    (solid: under load; dotted: the same run's idle-network measurement)."""
    cells = {(r["proto"], r["alg"]): r for r in rows if r["topo"] == topo and r["case"] == "mpi" and r.get("mpi")}
    if not cells:
        return None
    protos = [p for p in protos if any(k[0] == p for k in cells)]
    fig, axes = plt.subplots(1, len(protos), figsize=(4.6 * len(protos) + 1.6, 3.8), squeeze=False, sharey=True)
    for j, proto in enumerate(protos):
        ax = axes[0][j]
        for alg in algs:
            r = cells.get((proto, alg))
            if r is None:
                continue
            sizes = sorted(r["mpi"], key=int)
            for key, style, lab in (("latency_us", "-", alg), ("idle_latency_us", ":", f"{alg}, idle")):
                pts = [(int(n), r["mpi"][n][key]["mean"] / 1000) for n in sizes if r["mpi"][n].get(key)]
                if pts:
                    ax.plot(*zip(*pts, strict=True), style, marker="o" if style == "-" else None, markersize=3,
                            color=ALG_COLORS.get(alg), label=lab)  # fmt: skip
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)", fontsize=8)
        ax.set_ylabel("ping-pong latency (ms)", fontsize=8)
        ax.set_title(f"{topo}, {proto.upper()} load", fontsize=9)
        ax.grid(alpha=0.3, which="both")
        ax.tick_params(labelsize=7)
    handles, labels = axes[0][-1].get_legend_handles_labels()
    for a in axes[0][:-1]:  # every algorithm once, even when the last panel lacks one
        for h, lab in zip(*a.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    axes[0][-1].legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    r0 = next(iter(cells.values()))
    fig.suptitle(f"MPI ping-pong, {topo} at {r0['link_mbps']:g} Mb/s, {r0['mpi_iters']} round trips per size",
                 fontsize=10)  # fmt: skip
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path
