"""The thesis's failure reproduced with the model of bmv2's TM, then lanes's paced TM, same set-up.

TOPO-3 (tree2) at 10 Mb/s with the paper's settings, UDP load: the PROACTIVE case (high-class
one-way delay once the high class is present) and the MPI case (ping-pong latency at 16 KiB),
each under strict priority and RL-SP-DRR, once with `--switch-model bmv2` and once with lanes's
paced TM. One run per cell. The load average is recorded before and after each run.

Run it under the machine's timing lock, as root:
  flock /work/timing.lock .venv/bin/python bench/lab_bmv2_model.py --runs /tmp/bmv2-lab \\
      --json bench/results/bmv2_model/lab_topo3_10m.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from lanes.lab.report import MAIN_PHASE, metrics
from lanes.lab.thesis import PAPER, PUBLISHED

CASES = ["proactive", "mpi"]
ALGS = ["strict", "rlsp-drr"]
MODELS = ["bmv2", "lanes"]
KEEP = ["high_owd_ms", "high_mbps", "high_loss_pct", "low_owd_ms", "low_mbps", "low_loss_pct",
        "mpi_1024_ms", "mpi_16384_ms", "port_use_pct", "switch_cpu_pct"]  # fmt: skip


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def run_cell(case: str, alg: str, model: str, a: argparse.Namespace) -> dict:
    out = a.runs / f"{case}_{alg}_{model}"
    cmd = [str(Path(sys.executable).parent / "lanes"), "lab", "run", "--topo", "tree2", "--case", case, "--alg", alg,
           "--proto", "udp", "--link-mbps", "10", "--duration", f"{a.duration:g}",
           "--switch-model", model, "--out", str(out)]  # fmt: skip
    if case == "mpi":
        cmd += ["--mpi-iters", str(a.mpi_iters), "--mpi-timeout", f"{a.mpi_timeout:g}"]
    load_start, t0 = loadavg(), time.monotonic()
    print(f"bmv2-model: {case} {alg} {model} (load {load_start})", file=sys.stderr, flush=True)
    rc = subprocess.run(cmd, check=False).returncode
    cell = {"case": case, "alg": alg, "model": model, "run_dir": str(out), "exit": rc,
            "wall_s": round(time.monotonic() - t0, 1), "load1_start": load_start, "load1_end": loadavg()}  # fmt: skip
    if rc == 0:
        read_run(out, cell)
    return cell


def read_run(out: Path, cell: dict) -> None:
    """The run's metrics and its TM's mean queueing delay per loaded queue (ms, the main phase):
    under the bmv2 model that includes the time in the output buffer."""
    summary = out / "summary.json"
    if not summary.is_file():
        return
    s = json.loads(summary.read_text())
    m = metrics(s)
    cell["metrics"] = {k: m.get(k) for k in KEEP}
    cell["warnings"] = s.get("validity", {}).get("warnings", [])
    phase = MAIN_PHASE[cell["case"]]
    delays = {}
    for sw, ports in (s.get("queueing_delay_us") or {}).items():
        for port, queues in ports.items():
            for q, phases in queues.items():
                st = phases.get(phase)
                if st and st["pkts"] >= 1000:
                    delays[f"{sw}:{port}:q{q}"] = round(st["mean_us"] / 1000, 3)
    cell["tm_delay_ms"] = delays


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=Path, required=True, help="directory for the lab runs")
    ap.add_argument("--json", type=Path, required=True, help="result JSON to write")
    ap.add_argument(
        "--duration",
        type=float,
        default=60.0,
        help="seconds per run (proactive: high class in the second half)",
    )
    ap.add_argument("--mpi-iters", type=int, default=5, help="ping-pong round trips per message size")
    ap.add_argument(
        "--mpi-timeout", type=float, default=1200.0, help="stop the ping-pong after this many seconds"
    )
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--algs", default=",".join(ALGS))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--reread", action="store_true", help="only re-read the runs already in --runs")
    a = ap.parse_args()
    old = json.loads(a.json.read_text()) if a.json.is_file() else {}
    cells = {(c["case"], c["alg"], c["model"]): c for c in old.get("cells", [])}
    for case in a.cases.split(","):
        for alg in a.algs.split(","):
            for model in a.models.split(","):
                if a.reread:
                    if (case, alg, model) in cells:
                        read_run(a.runs / f"{case}_{alg}_{model}", cells[(case, alg, model)])
                else:
                    cells[(case, alg, model)] = run_cell(case, alg, model, a)
                write(a, cells)
    return 0


def write(a: argparse.Namespace, cells: dict) -> None:
    thesis = {f"tree2/{c}/udp/{alg}": PUBLISHED.get(("tree2", c, "udp", alg), {}) | PAPER.get(("tree2", c, "udp", alg), {})
              for c in CASES for alg in ALGS}  # fmt: skip
    doc = {
        "what": "TOPO-3 (tree2) at 10 Mb/s, UDP load, paper settings; bmv2 TM model vs lanes's paced TM",
        "duration_s": a.duration, "mpi_iters": a.mpi_iters, "thesis": thesis,
        "cells": sorted(cells.values(), key=lambda c: (c["case"], c["alg"], c["model"])),
    }  # fmt: skip
    a.json.parent.mkdir(parents=True, exist_ok=True)
    a.json.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
