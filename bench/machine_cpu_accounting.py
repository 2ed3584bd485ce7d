#!/usr/bin/env python3
"""How the whole machine's CPU reads three ways at a saturated port (switch_cpu.py's load: h1, h2
and h3 each offer 60 % of a 100 Mb/s port toward h4), for the kernel's bridge + HTB and for lanes
rlsp-drr in turn: /proc/stat's busy columns (sampled at the scheduler tick on this kernel), wall
time less the CPUs' idle residency (cpuidle; what lanes/lab/machine_cpu.py uses), and the sum of
every task's run time (schedstat). 200 % = both cores. Needs root.

    sudo .venv/bin/python bench/machine_cpu_accounting.py [--rounds 3] [--seconds 8] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))
from lanes.lab import machine_cpu  # noqa: E402
from netns import Star, UdpFlows  # noqa: E402
from switch_latency import setup_htb, setup_lanes  # noqa: E402


def stat_ticks() -> tuple[int, int]:
    """(busy, total) jiffies from /proc/stat's first line, busy = all but idle and iowait."""
    v = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return sum(v) - v[3] - v[4], sum(v)


def one(contender: str, mbps: int, seconds: float) -> dict:
    with tempfile.TemporaryDirectory() as d, Star(4) as star:
        tmp = Path(d)
        if contender == "linux htb":
            setup_htb(star, port_mbps=mbps)
        else:
            setup_lanes(star, tmp, [], port_mbps=mbps)
        load = UdpFlows(star, tmp, {1: 0.6 * mbps, 2: 0.6 * mbps, 3: 0.6 * mbps}, seconds=seconds + 6)
        time.sleep(2.0)
        t0, c0, r0 = stat_ticks(), machine_cpu.snapshot(), machine_cpu.tasks_run_s()
        time.sleep(seconds)
        t1, c1, r1 = stat_ticks(), machine_cpu.snapshot(), machine_cpu.tasks_run_s()
        wall = c1.wall_s - c0.wall_s
        return {
            "contender": contender,
            "port_mbps": mbps,
            "proc_stat_ticks_pct": round(200.0 * (t1[0] - t0[0]) / (t1[1] - t0[1]), 1),
            "idle_residency_pct": machine_cpu.busy_pct(c0, c1),
            "tasks_run_time_pct": round(100.0 * (r1 - r0) / wall, 1),
            "received_mbps": {f"h{h}": round(v["mbps"], 1) for h, v in load.received().items()},
        }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--mbps", type=int, default=100)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = []
    for r in range(1, args.rounds + 1):
        for contender in ("linux htb", "lanes rlsp-drr"):
            row = {"round": r, **one(contender, args.mbps, args.seconds)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
