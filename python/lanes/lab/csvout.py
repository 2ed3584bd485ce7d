"""CSV files beside a run's JSON, for spreadsheets and other plotting tools: series.csv (per
second, per flow), summary.csv (per flow and phase), mpi.csv (per message size), and
transitions.csv (runtime case)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

SERIES_FIELDS = ["t", "flow", "class", "mbps", "loss_pct", "lost", "total", "owd_ms", "owd_max_ms"]
PHASE_FIELDS = ["throughput_mbps", "share_pct", "loss_pct", "owd_ms", "owd_max_ms", "owd_p50_ms", "owd_p99_ms",
                "owd_p999_ms", "seconds"]


def write_csv(path: Path, header: list[str], rows: list[list]) -> Path:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows([["" if v is None else v for v in r] for r in rows])
    return path


def write_run_csvs(run_dir: Path) -> list[Path]:
    """Write the CSVs of one run from its summary.json and series.json; returns what it wrote."""
    s = json.loads((run_dir / "summary.json").read_text())
    series_path = run_dir / "series.json"
    series = json.loads(series_path.read_text()) if series_path.exists() else {}
    written = []
    rows = []
    for key, pts in series.items():
        cls = s["flows"].get(key, {}).get("class", "")
        rows += [[r.get("t"), key, cls, *(r.get(k) for k in SERIES_FIELDS[3:])] for r in pts]
    rows.sort(key=lambda r: (r[0], r[1]))
    written.append(write_csv(run_dir / "series.csv", SERIES_FIELDS, rows))
    q = s["params"]
    head = ["topo", "case", "alg", "proto", "link_mbps", "flow", "class", "phase", *PHASE_FIELDS]
    rows = [
        [q["topo"], q["case"], q["alg"], q["proto"], q["link_mbps"], key, f["class"], ph, *(st.get(k) for k in PHASE_FIELDS)]
        for key, f in s["flows"].items()
        for ph, st in f["phases"].items()
    ]  # fmt: skip
    written.append(write_csv(run_dir / "summary.csv", head, rows))
    mpi = s.get("mpi")
    if mpi and mpi.get("latency_us"):
        idle = mpi.get("idle_latency_us", {})
        sizes = sorted(mpi["latency_us"], key=int)
        rows = [[int(n), mpi["latency_us"][n], mpi.get("max_us", {}).get(n), idle.get(n)] for n in sizes]
        written.append(write_csv(run_dir / "mpi.csv", ["size_bytes", "latency_us", "max_us", "idle_latency_us"], rows))
    tr = s.get("transitions")
    if tr:
        fields = ["to_prioritized_s", "to_fair_s", "switch_to_prioritized_s", "switch_to_fair_s"]
        rows = [[k, *(v.get(f) for f in fields)] for k, v in tr.items()]
        written.append(write_csv(run_dir / "transitions.csv", ["flow", *fields], rows))
    return written
