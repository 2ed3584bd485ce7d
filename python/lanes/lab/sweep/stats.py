"""Per-cell numbers of a sweep: each run's metrics (those of `lanes lab report`, RUNTIME
transition times included), their mean and 95 % confidence interval over the repeats, and the cell's
machine load and wall time. One row per cell; written as sweep.csv."""

from __future__ import annotations

import json
from pathlib import Path

from lanes.lab.csvout import write_csv
from lanes.lab.repeats import mean_ci
from lanes.lab.report import COLUMNS, metrics
from lanes.lab.sweep.machines import cell_machines
from lanes.lab.sweep.matrix import Cell, is_complete

METRICS = [k for k, _ in COLUMNS]
KEYS = ["topo", "case", "alg", "proto", "link_mbps", "duration_s", "mpi_iters"]
MACHINE_KEYS = ["nodes", "machine_kinds", "kernels"]  # lists, "; "-joined in sweep.csv


def run_dirs(out: Path, name: str) -> list[Path]:
    """The run directories of one cell: the cell's own, or its r1, r2, ... (repeats)."""
    d = out / name
    if (d / "summary.json").is_file():
        return [d]
    return sorted((p for p in d.glob("r*") if (p / "summary.json").is_file()), key=lambda p: p.name)


def _json(p: Path) -> dict:
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return {}


def cell_row(out: Path, cell: Cell) -> dict | None:
    """Mean and CI of every metric over the cell's complete runs; None if it has none."""
    runs = [(d, _json(d / "summary.json")) for d in run_dirs(out, cell.name)]
    runs = [(d, s) for d, s in runs if is_complete(cell, d)]
    if not runs:
        return None
    row: dict = {k: getattr(cell, k) for k in KEYS}
    per = [metrics(s) for _, s in runs]
    for k in METRICS:
        row[k] = mean_ci([m[k] for m in per if m.get(k) is not None])
    metas = [_json(d / "cell.json") for d, _ in runs]
    loads = [x for m in metas for x in (m.get("load1_start"), m.get("load1_end")) if x is not None and x >= 0]
    row["n"] = len(runs)
    row["valid_runs"] = sum(not s.get("validity", {}).get("warnings") for _, s in runs)
    row["warnings"] = [w for _, s in runs for w in s.get("validity", {}).get("warnings", [])]
    row["load1"] = round(sum(loads) / len(loads), 2) if loads else None
    row["wall_s"] = round(sum(m.get("wall_s", 0) for m in metas) / len(metas), 1) if metas else None
    row["started_utc"] = min((m["started_utc"] for m in metas if m.get("started_utc")), default="")
    row["runs"] = [str(d) for d, _ in runs]
    row["mpi"] = _mpi_sizes([s for _, s in runs])
    row |= cell_machines(metas)
    return row


def _mpi_sizes(sums: list[dict]) -> dict[str, dict]:
    """Per message size: mean latency (us) over the runs, and the idle-network latency."""
    out: dict[str, dict] = {}
    for key in ("latency_us", "idle_latency_us"):
        sizes = {n for s in sums for n in (s.get("mpi") or {}).get(key, {})}
        for n in sizes:
            v = [s["mpi"][key][n] for s in sums if n in (s.get("mpi") or {}).get(key, {})]
            out.setdefault(n, {})[key] = mean_ci(v)
    return out


def write_sweep_csv(path: Path, rows: list[dict]) -> Path:
    head = KEYS + ["n", "valid_runs", "load1", "wall_s", "started_utc"]
    head += [f"{k}{suffix}" for k in METRICS for suffix in ("", "_ci95")] + MACHINE_KEYS
    data = []
    for r in rows:
        line = [r.get(k) for k in KEYS + ["n", "valid_runs", "load1", "wall_s", "started_utc"]]
        for k in METRICS:
            m = r.get(k)
            line += [_round(m["mean"]) if m else None, _round(m["ci95"]) if m and m["ci95"] is not None else None]
        data.append(line + ["; ".join(r.get(k, [])) for k in MACHINE_KEYS])
    return write_csv(path, head, data)


def write_mpi_csv(path: Path, rows: list[dict]) -> Path:
    data = []
    for r in rows:
        for n in sorted(r.get("mpi", {}), key=int):
            v = r["mpi"][n]
            lat, idle = v.get("latency_us"), v.get("idle_latency_us")
            data.append([r["topo"], r["proto"], r["alg"], r["link_mbps"], int(n),
                         _round(lat["mean"]) if lat else None,
                         _round(lat["ci95"]) if lat and lat["ci95"] is not None else None,
                         _round(idle["mean"]) if idle else None])  # fmt: skip
    return write_csv(path, ["topo", "proto", "alg", "link_mbps", "size_bytes", "latency_us", "latency_us_ci95",
                            "idle_latency_us"], data)  # fmt: skip


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 4)
