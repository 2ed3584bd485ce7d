#!/usr/bin/env python3
"""The whole machine's CPU phase by phase, lanes against the kernel path in the same round: star,
PROACTIVE, UDP (200 Mb/s by default), where the low classes fill the port alone in the first
phase and the high class joins them in the second. Per phase: the machine's busy time (the lab's
system_pct, cpuidle residency), the switch process's, and for lanes the data plane loop's turns
and what ended its waits (loop.jsonl); in the middle of the second phase, the scheduler's
wake-ups a second by waker and wakee and the interrupts sent between vCPUs to deliver them
(`perf record` of tracepoints only: no sampling, no call chains).

    .venv/bin/python bench/star_phase_cpu.py [--rounds 3] [--link-mbps 200] [--duration 14]
        [--out results/bench/star_phase_cpu]      (as root)

Writes OUT/results.json (per run) and prints the table. The first second of each phase is left
out of its means (traffic starting, or the high class's sender starting).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))
from lanes.lab.summary import read_jsonl  # noqa: E402

LANES = REPO / ".venv" / "bin" / "lanes"
EVENTS = ("sched:sched_waking", "irq_vectors:call_function_single_entry", "irq_vectors:reschedule_entry")
WAKEE = re.compile(r"comm=(\S+)")
LOOP_COUNTS = ("turns", "woken_by_arrival", "woken_by_timer", "turns_rx_only")


def task(comm: str) -> str:
    """A thread's name without its instance number (ksoftirqd/1 -> ksoftirqd)."""
    return comm.split("/")[0]


def count_wakes(script: str, seconds: float) -> dict[str, int]:
    """Wake-ups a second by "waker -> wakee", and the interrupts a second by name, from `perf
    script -F comm,event,trace`'s lines."""
    n: Counter[str] = Counter()
    for line in script.splitlines():
        comm, _, rest = line.strip().partition(" ")
        if "sched_waking" in rest:
            if m := WAKEE.search(rest):
                n[f"{task(comm)} -> {task(m[1])}"] += 1
        elif "irq_vectors:" in rest:
            n[rest.split(":")[1].strip()] += 1
    return {k: round(v / seconds) for k, v in n.most_common()}


def wakes_per_s(events_data: Path, seconds: float) -> dict[str, int]:
    """`count_wakes` of a perf.data file."""
    out = subprocess.run(["perf", "script", "-i", str(events_data), "-F", "comm,event,trace"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    return count_wakes(out, seconds)


def per_phase(run_dir: Path) -> dict:
    """Each phase's mean CPU figures and, for lanes, its loop's counts a second."""
    summary = json.loads((run_dir / "summary.json").read_text())
    cpu, loop = read_jsonl(run_dir / "cpu.jsonl"), read_jsonl(run_dir / "loop.jsonl")
    out = {}
    for ph in summary["phases"]:
        lo, hi = ph["start_s"] + 1, ph["end_s"]
        inside = [r for r in cpu if lo <= r["t"] <= hi]
        fig: dict = {
            "system_pct": round(statistics.mean(r["system_pct"] for r in inside), 1) if inside else None,
            "switch_pct": round(statistics.mean(r["s1"] for r in inside), 1) if inside and "s1" in inside[0] else None,
        }  # fmt: skip
        span = [r for r in loop if lo <= r["t"] <= hi]
        if len(span) >= 2:
            dt = span[-1]["t"] - span[0]["t"]
            for k in LOOP_COUNTS:
                fig[f"{k}_per_s"] = round((span[-1].get(k, 0) - span[0].get(k, 0)) / dt)
        out[ph["name"]] = fig
    return out


def run_one(args, name: str, alg: str) -> dict:
    """One lab run, the scheduler's events recorded in the middle of its second phase."""
    out = args.out / name
    events = args.out / f"{name}.events.data"
    lab = subprocess.Popen(
        [str(LANES), "lab", "run", "--topo", "star", "--case", "proactive", "--alg", alg, "--proto", "udp",
         "--link-mbps", str(args.link_mbps), "--duration", str(args.duration), "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        # the lab builds the network in about two seconds; the window sits in the second phase
        time.sleep(args.duration / 2 + 4)
        subprocess.run(["perf", "record", "-a", *(a for e in EVENTS for a in ("-e", e)), "-o", str(events),
                        "--", "sleep", str(args.events_s)], capture_output=True, check=True)  # fmt: skip
    finally:
        _, err = lab.communicate()
    if lab.returncode != 0:
        raise RuntimeError(f"lab run {name} failed: {err.strip().splitlines()[-1:]}")
    summary = json.loads((out / "summary.json").read_text())
    res = {"name": name, "alg": alg, "valid": summary["validity"]["valid"], "phases": per_phase(out)}
    res["wakeups_per_s"] = wakes_per_s(events, args.events_s)
    events.unlink()
    return res


def table(results: list[dict]) -> str:
    names = [r["name"] for r in results]
    lines = ["| per phase | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for ph in ("low_only", "high_present"):
        for k in ("system_pct", "switch_pct", *(f"{c}_per_s" for c in LOOP_COUNTS)):
            vals = [r["phases"].get(ph, {}).get(k) for r in results]
            if any(v is not None for v in vals):
                cells = " | ".join("" if v is None else f"{v:,}" for v in vals)
                lines.append(f"| {ph}: {k} | {cells} |")
    keys = sorted({k for r in results for k, v in r["wakeups_per_s"].items() if v >= 300},
                  key=lambda k: -max(r["wakeups_per_s"].get(k, 0) for r in results))  # fmt: skip
    for k in keys:
        lines.append(f"| high_present, a second: {k} | " + " | ".join(f"{r['wakeups_per_s'].get(k, 0):,}" for r in results) + " |")  # fmt: skip
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--link-mbps", type=int, default=200)
    ap.add_argument(
        "--duration", type=float, default=14.0, help="seconds of traffic, two phases of half each"
    )
    ap.add_argument("--events-s", type=float, default=3.0, help="seconds of recorded scheduler events")
    ap.add_argument("--out", type=Path, default=REPO / "results" / "bench" / "star_phase_cpu")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("star_phase_cpu: needs root (the lab and perf -a)", file=sys.stderr)
        return 2
    if args.duration / 2 + 4 + args.events_s > args.duration + 1:
        print(
            "star_phase_cpu: --events-s must end inside the second phase; lengthen --duration",
            file=sys.stderr,
        )
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    results = []
    for i in range(args.rounds):
        for alg in ("rlsp-drr", "linux-htb"):
            print(f"star_phase_cpu: round {i + 1}/{args.rounds}, {alg}", file=sys.stderr, flush=True)
            try:
                results.append(run_one(args, f"r{i + 1}_{alg}", alg))
            except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
                print(f"star_phase_cpu: {e}", file=sys.stderr)
                return 1
    (args.out / "results.json").write_text(json.dumps(results, indent=1))
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
