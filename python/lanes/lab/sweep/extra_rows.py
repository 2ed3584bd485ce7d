"""The thesis's results the sweep tables do not cover, computed from files (runs nothing):

- build-up: seconds from the high class's start until its per-second one-way delay first reaches
  BUILDUP_FRACTION of its plateau (the median of the phase's second half);
- CPU: the switch process's mean CPU per algorithm, and against the link rate;
- TCP retransmissions per second against the link rate (iperf 2's client `Rtry` column);
- TCP convergence: after the high class starts, seconds until each TCP flow holds its share
  (lanes.lab.transitions.time_to_settle: within 10 % of its settled rate for 3 s);
- stability: the spread of each flow's per-second throughput over a window (coefficient of
  variation, and the largest second's distance from the mean).

Inputs are the small per-run files `export_run` writes (run.json, series.csv, cpu.csv,
tcp_retries.csv) and the sweeps' committed sweep.csv."""

from __future__ import annotations

import csv
import json
import statistics
import sys
from pathlib import Path

from lanes.errors import LanesError
from lanes.lab.csvout import write_csv, write_run_csvs
from lanes.lab.traffic import parse_client_retries
from lanes.lab.transitions import time_to_settle

BUILDUP_FRACTION = 0.9
PLATEAU_FLOOR_MS = 1.0  # below this the delay has no build-up worth timing
SETTLE_S = 2.0  # seconds after a change left out of the stability window, as the phase means do
STABILITY_S = 30.0
STABLE_CV = 0.10  # a flow whose per-second rate varies by at most this (std/mean) is stable


def buildup_s(rows: list[dict], start_s: float, end_s: float, fraction: float = BUILDUP_FRACTION) -> dict:
    """Build-up of a per-second delay series ({t, owd_ms}, t = the second's end) in [start_s, end_s]:
    {plateau_ms, buildup_s}; buildup_s is None when the plateau is under PLATEAU_FLOOR_MS (nothing
    builds up) or there is no series."""
    sel = sorted((r for r in rows if start_s < r["t"] <= end_s + 0.25 and r.get("owd_ms") is not None),
                 key=lambda r: r["t"])  # fmt: skip
    mid = start_s + (end_s - start_s) / 2
    tail = [r["owd_ms"] for r in sel if r["t"] > mid]
    if not tail:
        return {"plateau_ms": None, "buildup_s": None}
    plateau = statistics.median(tail)
    res = {"plateau_ms": round(plateau, 3), "buildup_s": None}
    if plateau >= PLATEAU_FLOOR_MS:
        first = next(r for r in sel if r["owd_ms"] >= fraction * plateau)  # the median is reached
        res["buildup_s"] = round(max(0.0, first["t"] - start_s), 3)
    return res


def stability(rows: list[dict], start_s: float, end_s: float) -> dict:
    """Spread of the per-second rate ({t, mbps}) over the seconds that end in (start_s, end_s]."""
    v = [r["mbps"] for r in rows if start_s < r["t"] - 1.0 + 1e-9 and r["t"] <= end_s + 0.25]
    if len(v) < 2:
        return {"seconds": len(v), "mean_mbps": None, "cv": None, "max_dev_pct": None}
    mean = statistics.fmean(v)
    cv = statistics.pstdev(v) / mean if mean else None
    dev = 100.0 * max(abs(x - mean) for x in v) / mean if mean else None
    return {"seconds": len(v), "mean_mbps": round(mean, 3), "cv": None if cv is None else round(cv, 4),
            "max_dev_pct": None if dev is None else round(dev, 1)}  # fmt: skip


def convergence_s(rows: list[dict], change_s: float, end_s: float) -> float | None:
    """Seconds after `change_s` until a flow's per-second rate holds its settled share."""
    return time_to_settle(rows, change_s, end_s)


# ---- per-run files ---------------------------------------------------------------------------


def export_run(run_dir: Path, dest: Path) -> Path:
    """Copy what the rows need from a lab run directory into `dest` (small files, committable):
    run.json (params, phases, flow classes, start and load), series.csv (the run's own), cpu.csv (per second),
    tcp_retries.csv (per flow and second, TCP runs)."""
    if not (run_dir / "summary.json").is_file():
        raise LanesError(f"{run_dir}: not a lab run directory (no summary.json)")
    s = json.loads((run_dir / "summary.json").read_text())
    dest.mkdir(parents=True, exist_ok=True)
    rec = json.loads((run_dir / "cell.json").read_text()) if (run_dir / "cell.json").exists() else {}
    cell = {"params": s["params"], "phases": s["phases"], "classes": {k: f["class"] for k, f in s["flows"].items()},
            **{k: rec.get(k) for k in ("started_utc", "load1_start", "load1_end")}}  # fmt: skip
    (dest / "run.json").write_text(json.dumps(cell, indent=1, sort_keys=True) + "\n")
    if not (run_dir / "series.csv").exists():
        write_run_csvs(run_dir)
    (dest / "series.csv").write_bytes((run_dir / "series.csv").read_bytes())
    recs = (
        [json.loads(x) for x in (run_dir / "cpu.jsonl").read_text().splitlines()]
        if (run_dir / "cpu.jsonl").exists()
        else []
    )
    names = sorted({k for r in recs for k in r if k != "t"})
    write_csv(dest / "cpu.csv", ["t", *names], [[r["t"], *(r.get(k) for k in names)] for r in recs])
    if s["params"]["proto"] == "tcp":
        rows = []
        for log in sorted(run_dir.glob("client_*.txt")):
            src, dst = log.stem.split("_")[1:3]
            rows += [[f"{src}->{dst}", end, n] for end, n in parse_client_retries(log.read_text())]
        write_csv(dest / "tcp_retries.csv", ["flow", "end_s", "retries"], rows)
    return dest


def _csv(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _num(v: str | None) -> float | None:
    return float(v) if v not in (None, "") else None


def load_cell(cell_dir: Path) -> dict:
    """A cell exported by export_run: its run.json, series per flow, CPU and retry rows."""
    cell = json.loads((cell_dir / "run.json").read_text())
    series: dict[str, list[dict]] = {}
    for r in _csv(cell_dir / "series.csv"):
        row = {"t": float(r["t"]), "mbps": float(r["mbps"])}
        if _num(r.get("owd_ms")) is not None:
            row["owd_ms"] = float(r["owd_ms"])
        series.setdefault(r["flow"], []).append(row)
    cell["series"] = series
    cell["cpu"] = _csv(cell_dir / "cpu.csv") if (cell_dir / "cpu.csv").exists() else []
    cell["retries"] = _csv(cell_dir / "tcp_retries.csv") if (cell_dir / "tcp_retries.csv").exists() else []
    return cell


def _phase(cell: dict, name: str) -> dict:
    return next(p for p in cell["phases"] if p["name"] == name)


def switch_cpu_pct(cell: dict, a: float, b: float) -> float | None:
    """Mean CPU % of the busiest switch process over the samples in (a, b]."""
    names = [k for k in (cell["cpu"][0] if cell["cpu"] else {}) if k not in ("t", "system_pct", "steal_pct")]
    means = []
    for n in names:
        v = [float(r[n]) for r in cell["cpu"] if r.get(n) not in (None, "") and a < float(r["t"]) <= b]
        if v:
            means.append(statistics.fmean(v))
    return round(max(means), 1) if means else None


def retries_per_s(cell: dict, a: float, b: float) -> float | None:
    """TCP retransmissions per second, all flows together, over the client seconds in (a, b]
    (the clients' clocks start with their flows: a high flow started at the phase change)."""
    if not cell["retries"]:
        return None
    high_start = _phase(cell, "high_present")["start_s"] if cell["params"]["case"] == "proactive" else 0.0
    tot, secs = 0, set()
    for r in cell["retries"]:
        t0 = high_start if cell["classes"].get(r["flow"]) == "high" else 0.0
        t = t0 + float(r["end_s"])
        if a < t <= b + 0.25:
            tot += int(r["retries"])
            secs.add(round(t))
    return round(tot / len(secs), 1) if secs else None


def cell_rows(cell: dict) -> dict:
    """Every row's number for one exported PROACTIVE cell (the high class joins at the phase change)."""
    ph = _phase(cell, "high_present")
    a, b = ph.get("changed_s", ph["start_s"]), ph["end_s"]
    q = cell["params"]
    out: dict = {"topo": q["topo"], "case": q["case"], "alg": q["alg"], "proto": q["proto"],
                 "link_mbps": q["link_mbps"], "duration_s": q["duration_s"]}  # fmt: skip
    out["switch_cpu_pct"] = switch_cpu_pct(cell, 0.0, b)
    out["retries_per_s"] = retries_per_s(cell, a + 2.0, b)  # after the start's slow start
    high = [k for k, c in cell["classes"].items() if c == "high"]
    if q["proto"] == "udp" and high:
        bu = [buildup_s(cell["series"].get(k, []), ph["start_s"], b) for k in high]
        out["high_plateau_ms"] = max(
            (x["plateau_ms"] for x in bu if x["plateau_ms"] is not None), default=None
        )
        times = [x["buildup_s"] for x in bu if x["buildup_s"] is not None]
        out["buildup_s"] = max(times) if times else None
        # the lower classes: from the load's start, and again when the high class joins
        first = _phase(cell, "low_only")
        low = [k for k, c in cell["classes"].items() if c != "high"]
        for col, (a0, b0) in (
            ("low_buildup_s", (first["start_s"], first["end_s"])),
            ("low_rebuild_s", (ph["start_s"], b)),
        ):
            t = [buildup_s(cell["series"].get(k, []), a0, b0)["buildup_s"] for k in low]
            out[col] = max((x for x in t if x is not None), default=None)
    if q["proto"] == "tcp":
        conv = [convergence_s(rows, ph["start_s"], b) for rows in cell["series"].values()]
        out["convergence_s"] = None if any(c is None for c in conv) or not conv else max(c for c in conv if c is not None)
        # the phase after its first seconds (TCP finds its share), at most its last STABILITY_S
        w0 = max(a + SETTLE_S, b - STABILITY_S)
        stab = [stability(rows, w0, b) for rows in cell["series"].values()]
        cvs = [x["cv"] for x in stab if x["cv"] is not None]
        out["stability_window_s"] = round(b - w0, 1)
        out["max_cv"] = max(cvs) if cvs else None
        out["max_dev_pct"] = max(
            (x["max_dev_pct"] for x in stab if x["max_dev_pct"] is not None), default=None
        )
    return out


# ---- from the sweeps' committed sweep.csv ------------------------------------------------------


def sweep_rows(sweep_csv: Path, columns: list[str]) -> list[dict]:
    """The cells of a committed sweep.csv with the given columns (numbers), keyed like the sweep."""
    out = []
    for r in _csv(sweep_csv):
        row = {k: r[k] for k in ("topo", "case", "alg", "proto")}
        row["link_mbps"] = float(r["link_mbps"])
        row["load1"] = _num(r.get("load1"))
        row.update({c: _num(r.get(c)) for c in columns})
        out.append(row)
    return out


CPU_FIELDS = ["report", "topo", "proto", "alg", "link_mbps", "cells", "switch_cpu_pct", "load1_max"]


def cpu_table(sweep_csvs: list[Path]) -> list[dict]:
    """Switch CPU (sweep.csv's switch_cpu_pct: the busiest switch process's run mean) per report,
    topology, load protocol, algorithm and link rate, averaged over the RUNTIME and PROACTIVE
    cells (MPI cells carry a ping-pong, not the same load)."""
    groups: dict[tuple, list[dict]] = {}
    for path in sweep_csvs:
        for r in sweep_rows(path, ["switch_cpu_pct"]):
            if r["case"] in ("runtime", "proactive") and r["switch_cpu_pct"] is not None:
                key = (path.parent.name, r["topo"], r["proto"], r["alg"], r["link_mbps"])
                groups.setdefault(key, []).append(r)
    out = []
    for (rep, topo, proto, alg, link), rs in groups.items():
        loads = [r["load1"] for r in rs if r["load1"] is not None]
        out.append({"report": rep, "topo": topo, "proto": proto, "alg": alg, "link_mbps": link, "cells": len(rs),
                    "switch_cpu_pct": round(statistics.fmean(r["switch_cpu_pct"] for r in rs), 1),
                    "load1_max": max(loads) if loads else None})  # fmt: skip
    return out


CELL_FIELDS = ["topo", "case", "alg", "proto", "link_mbps", "duration_s", "switch_cpu_pct", "retries_per_s",
               "high_plateau_ms", "buildup_s", "low_buildup_s", "low_rebuild_s", "convergence_s", "stability_window_s", "max_cv", "max_dev_pct",
               "load1_start"]  # fmt: skip


def write_cells_csv(cell_dirs: list[Path], path: Path) -> list[dict]:
    """One row per exported cell (cell_rows), in the order given, to `path`."""
    rows = []
    for d in cell_dirs:
        cell = load_cell(d)
        r = cell_rows(cell)
        r["load1_start"] = cell.get("load1_start")
        rows.append(r)
    write_csv(path, CELL_FIELDS, [[r.get(k) for k in CELL_FIELDS] for r in rows])
    return rows


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(
        prog="python -m lanes.lab.sweep.extra_rows", description=__doc__.splitlines()[0]
    )
    ap.add_argument("--export", nargs="+", type=Path, metavar="RUN_DIR", help="lab run directories to export")
    ap.add_argument("--to", type=Path, help="where --export puts one sub-directory per run")
    ap.add_argument(
        "--cells", nargs="+", type=Path, metavar="DIR", help="exported cells to compute the rows of"
    )
    ap.add_argument("--csv", type=Path, help="where the rows of --cells go")
    ap.add_argument(
        "--cpu", nargs="+", type=Path, metavar="SWEEP_CSV", help="sweeps to tabulate switch CPU from"
    )
    ap.add_argument("--cpu-csv", type=Path, help="where the table of --cpu goes")
    a = ap.parse_args(argv)
    if a.export:
        if not a.to:
            ap.error("--export needs --to")
        try:
            for rd in a.export:
                print(export_run(rd, a.to / rd.name))
        except LanesError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    if a.cpu:
        if not a.cpu_csv:
            ap.error("--cpu needs --cpu-csv")
        rows = cpu_table(a.cpu)
        write_csv(a.cpu_csv, CPU_FIELDS, [[r[k] for k in CPU_FIELDS] for r in rows])
        print(f"{len(rows)} rows -> {a.cpu_csv}")
    if a.cells:
        if not a.csv:
            ap.error("--cells needs --csv")
        for r in write_cells_csv(a.cells, a.csv):
            print(r)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
