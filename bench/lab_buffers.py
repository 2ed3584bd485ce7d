#!/usr/bin/env python3
"""Queue delay and buffer occupancy of a sparse high-priority flow, as in the thesis's section
5.2 (figures 5.3, 5.4 and 5.6), for best effort, strict priority and RL-SP-DRR in one bench.

Star at 80 Mb/s, PROACTIVE: the high class sends 0.01 % of the link in the second half of the run,
the two lower classes either 50 % of the link each ("loaded") or 0.01 % ("alone"). Per run: the
high class's mean queueing delay as the traffic manager measures it per packet (enqueue to
dequeue), the egress queues' depth (mean and max of samples every 0.25 s, port to h4), and the
most frames that waited in each receive ring at once (the input side). The switch sends with the
qdisc bypassed: there is no output buffer to report.

    sudo .venv/bin/python bench/lab_buffers.py [--duration 30] [--high-load 0.01] [--out results/bench/lab_buffers]

`--high-load` is the high class's rate in % of the link: 0.01 gives about 9 of our 1470-byte
datagrams in its 15 s, 0.1 about 100 (the thesis measured 100 packets). Takes about 5 minutes
with the defaults. Writes OUT/results.json and OUT/results.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LANES = REPO / ".venv" / "bin" / "lanes"
ALGS = ["no", "strict", "rlsp-drr"]
LOADS = {"alone": "0.01", "loaded": "50"}


def run(alg: str, low_load: str, duration: int, high_load: str, out: Path) -> dict:
    cmd = [str(LANES), "lab", "run", "--topo", "star", "--case", "proactive", "--alg", alg, "--proto", "udp",
           "--link-mbps", "80", "--duration", str(duration), "--high-load", high_load, "--low-load", low_load,
           "--out", str(out)]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        sys.exit(f"lab_buffers: {' '.join(cmd[1:])} failed: {r.stderr.strip().splitlines()[-1:]}")
    return json.loads((out / "summary.json").read_text())


def row(s: dict) -> dict:
    """The high class's queue delay and the occupancies of port 4 (to h4) while it is present."""
    delay = s["queueing_delay_us"]["s1"]["4"]
    high_q = max(delay, key=int)
    occ = s["occupancy"].get("s1", {}).get("high_present", {})
    queues = occ.get("queues", {}).get("4", {})
    return {
        "high_queue": high_q,
        "high_delay_mean_us": delay[high_q].get("high_present", {}).get("mean_us"),
        "high_delay_pkts": delay[high_q].get("high_present", {}).get("pkts"),
        "queues": {q: {"mean": v["mean"], "max": v["max"]} for q, v in queues.items()},
        "rx_backlog_max": {p: v["max"] for p, v in occ.get("rx_backlog", {}).items()},
        "valid": s["validity"]["valid"],
    }


def markdown(results: dict) -> str:
    lines = ["| alg | load | high queue delay, mean (packets) | egress queues at port 4: mean / max pkts | "
             "receive rings: most frames waiting (port: n) | valid |", "|---|---|---|---|---|---|"]  # fmt: skip
    for key, r in results.items():
        alg, load = key.split("/")
        queues = ", ".join(f"q{q} {v['mean']:g} / {v['max']}" for q, v in sorted(r["queues"].items()))
        rings = ", ".join(f"{p}: {n}" for p, n in sorted(r["rx_backlog_max"].items()))
        lines.append(f"| {alg} | {load} | {r['high_delay_mean_us']} us ({r['high_delay_pkts']}) | {queues} | {rings} "
                     f"| {'yes' if r['valid'] else 'no'} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=int, default=30)
    ap.add_argument("--high-load", default="0.01", help="the high class's rate, %% of the link")
    ap.add_argument("--out", type=Path, default=REPO / "results" / "bench" / "lab_buffers")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    results = {}
    t0 = time.monotonic()
    for load, low in LOADS.items():
        for alg in ALGS:
            print(f"lab_buffers: {alg} {load} ({time.monotonic() - t0:.0f} s so far)", file=sys.stderr, flush=True)
            results[f"{alg}/{load}"] = row(run(alg, low, a.duration, a.high_load, a.out / f"{alg}-{load}"))
    (a.out / "results.json").write_text(json.dumps(results, indent=1))
    (a.out / "results.md").write_text(markdown(results))
    print(markdown(results))


if __name__ == "__main__":
    main()
