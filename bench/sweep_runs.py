#!/usr/bin/env python3
"""Each run of one or more sweeps, flow by flow: a sweep's report keeps a cell's mean and 95 % CI,
and this keeps what the runs behind it gave (throughput, share, loss, one-way delay per phase),
read from each run's summary.json, and an MPI run's ping-pong as its summary has it. Writes one
JSON list, a record per run.

    .venv/bin/python bench/sweep_runs.py SWEEP_DIR [SWEEP_DIR ...] --out FILE.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

FIELDS = ("throughput_mbps", "share_pct", "loss_pct", "owd_ms")


def run_record(cell: str, run: Path) -> dict:
    s = json.loads((run / "summary.json").read_text())
    flows = {key: {phase: {k: v[k] for k in FIELDS if k in v} for phase, v in f["phases"].items()}
             for key, f in s["flows"].items()}  # fmt: skip
    rec = {"cell": cell, "run": run.name, "valid": bool(s["validity"]["valid"]), "flows": flows}
    return rec | ({"mpi": s["mpi"]} if "mpi" in s else {})


def records(sweeps: list[Path]) -> list[dict]:
    out = []
    for sweep in sweeps:
        for cell in sorted(d for d in sweep.iterdir() if d.is_dir() and d.name != "report"):
            out += [run_record(cell.name, run) for run in sorted(cell.glob("r*")) if (run / "summary.json").is_file()]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweeps", nargs="+", type=Path, help="sweep directories (lanes lab sweep --out)")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    missing = [str(d) for d in a.sweeps if not d.is_dir()]
    if missing:
        print(f"sweep_runs: no such sweep directory: {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        got = records(a.sweeps)
    except (OSError, KeyError, ValueError) as e:
        print(f"sweep_runs: a run's summary.json cannot be read: {e}", file=sys.stderr)
        return 1
    a.out.write_text(json.dumps(got, indent=1) + "\n")
    print(f"sweep_runs: {len(got)} runs -> {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
