#!/usr/bin/env python3
"""Round trips as an MPI job sees them: sockperf UDP ping-pong from h1 to h4 through one switch,
idle and beside saturating low-class traffic (h2 and h3 send 60 Mb/s each toward h4's 100 Mb/s
port), message sizes 14 B (sockperf's smallest) to 16 KiB, four contenders in one run: the
kernel's bridge, the bridge + tc HTB shaped like RL-SP-DRR (switch_latency.py's classes), lanes
strict and lanes rlsp-drr (tm_basic, h1 in the high class). Round-trip p50 / p99 / p99.9 per
size (sockperf reports half round trips; they are doubled here), and the CPU the idle runs cost
(the whole machine, and the switch process for lanes). Needs root.

    sudo .venv/bin/python bench/switch_pingpong.py [--seconds 3] [--mps 1000|max] [--reply-poll-us 0] [--json OUT]

Without a bottleneck of its own, the plain bridge forwards the load unshaped: it is the floor
for what a switch adds, not a scheduler.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))
from netns import Star, UdpFlows  # noqa: E402
from sched_wakeups import record, wakeups  # noqa: E402
from switch_cpu import measure_window, switch_pid  # noqa: E402
from switch_latency import setup_htb, setup_lanes  # noqa: E402

SIZES = [14, 64, 512, 1024, 1472, 4096, 16384]
CONTENDERS = ["bridge", "bridge+htb", "lanes strict", "lanes rlsp-drr"]
# How the switch process is scheduled (arguments to chrt, then the command): the lab's SCHED_FIFO
# 20, the fair class at the highest weight (nice -20), or SCHED_IDLE.
CPU_POLICIES = {
    "fifo": ("-f", "20"),
    "nice": ("-o", "0", "nice", "-n", "-20"),
    "idle": ("-i", "0"),
}
PERCENTILE = re.compile(r"percentile (\d+\.\d+) =\s+([\d.]+)")


def setup_bridge(star: Star) -> None:
    sw = star.sw
    star.ns(sw, "ip", "link", "add", "br0", "type", "bridge")
    for i in range(1, len(star.hosts) + 1):
        star.ns(sw, "ip", "link", "set", f"s1-eth{i}", "master", "br0")
    star.ns(sw, "ip", "link", "set", "br0", "up")


def setup(star: Star, contender: str, tmp: Path) -> None:
    if contender == "bridge":
        setup_bridge(star)
    elif contender == "bridge+htb":
        setup_htb(star)
    else:
        # "lanes SCHED", "lanes SCHED poll N" (the switch looks at its rings N us after a frame),
        # "lanes SCHED reply N" (--reply-poll-us N: looks up to N us for a port's answer)
        # or "lanes SCHED sched-POLICY" (the switch process at another CPU policy than SCHED_FIFO)
        words = contender.split()
        flags = {"poll": "--poll-us", "reply": "--reply-poll-us"}
        extra = [flags[words[2]], words[3]] if words[2:3] and words[2] in flags else []
        policy = words[2].removeprefix("sched-") if words[2:3] and words[2].startswith("sched-") else "fifo"
        setup_lanes(star, tmp, extra, scheduler=words[1], chrt=CPU_POLICIES[policy])


def pingpong(star: Star, size: int, seconds: float, mps: str) -> dict:
    """One sockperf ping-pong run h1 -> h4; round-trip percentiles in ms."""
    r = star.host(
        1,
        "sockperf",
        "ping-pong",
        "-i",
        star.ip(4),
        "-p",
        "11111",
        "-m",
        str(size),
        "-t",
        str(seconds),
        f"--mps={mps}",
        timeout=seconds + 30,
    )
    pct = {float(p): 2 * float(v) / 1000 for p, v in PERCENTILE.findall(r.stdout + r.stderr)}
    if 50.0 not in pct:
        raise RuntimeError(f"sockperf gave no percentiles: {r.stdout[-300:]}{r.stderr[-300:]}")
    return {"p50_ms": pct[50.0], "p99_ms": pct[99.0], "p99.9_ms": pct[99.9]}


def meter_cpu(into: dict, seconds: float, pid: int | None) -> None:
    """CPU over the middle of a `seconds`-long run (starts with it)."""
    time.sleep(0.5)
    into.update(measure_window(seconds - 1.0, pid))


def measure(
    star: Star, contender: str, tmp: Path, seconds: float, sizes: list[int], perf_sched: bool, mps: str
) -> dict:
    star.start(star.hosts[3], "sockperf", "server", "-i", star.ip(4), "-p", "11111")
    time.sleep(0.5)
    out: dict = {"idle": {}, "loaded": {}, "idle_cpu": {}}
    pid = switch_pid(star) if contender.startswith("lanes") else None
    for size in sizes:
        # CPU over the middle of the run: the whole machine's, and the switch process's
        cpu: dict = {}
        meter = threading.Thread(target=meter_cpu, args=(cpu, seconds, pid))
        meter.start()
        out["idle"][size] = pingpong(star, size, seconds, mps)
        meter.join()
        out["idle_cpu"][size] = cpu
        print(f"  {contender:15s} idle   {size:6d} B  {fmt(out['idle'][size])}  cpu {cpu}", flush=True)
        if perf_sched and contender.startswith("lanes"):
            # a run of its own: recording every scheduler event slows what it records
            data = tmp / f"sched-{len(list(tmp.glob('sched-*')))}.data"
            rec = record(data, seconds - 0.5)
            pingpong(star, size, seconds, mps)
            rec.wait()
            w = out.setdefault("idle_wakeups", {})[size] = wakeups(data, "lanes-dataplane")
            data.unlink()
            print(f"  {contender:15s} idle   {size:6d} B  data plane woken {w}", flush=True)
    load_dir = tmp / contender.replace(" ", "_").replace("+", "_")
    load_dir.mkdir()
    load = UdpFlows(star, load_dir, {2: 60, 3: 60}, seconds=len(sizes) * (seconds + 1.5) + 3)
    time.sleep(1.0)
    for size in sizes:
        out["loaded"][size] = pingpong(star, size, seconds, mps)
        print(f"  {contender:15s} loaded {size:6d} B  {fmt(out['loaded'][size])}", flush=True)
    out["low_class_mbps"] = {f"h{h}": v["mbps"] for h, v in load.received().items()}
    return out


def fmt(r: dict) -> str:
    return f"p50 {r['p50_ms']:.3f}  p99 {r['p99_ms']:.3f}  p99.9 {r['p99.9_ms']:.3f} ms"


def table(results: dict, cond: str, sizes: list[int]) -> str:
    head = "| size | " + " | ".join(f"{c} p50 / p99 / p99.9" for c in results) + " |"
    rows = [head, "|---" * (len(results) + 1) + "|"]
    for size in sizes:
        cells = [
            " / ".join(f"{results[c][cond][size][k]:.3f}" for k in ("p50_ms", "p99_ms", "p99.9_ms"))
            for c in results
        ]
        rows.append(f"| {size} B | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="sockperf run per size")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="message sizes, comma-separated")
    ap.add_argument("--mps", default="1000",
                    help="sockperf's messages per second, or 'max' for back to back as MPI's ping-pong (default 1000)")  # fmt: skip
    ap.add_argument("--reply-poll-us", default="",
                    help="also run lanes rlsp-drr with these --reply-poll-us values (comma-separated)")  # fmt: skip
    ap.add_argument("--poll-us", default="",
                    help="also run lanes rlsp-drr with these --poll-us values (comma-separated)")  # fmt: skip
    ap.add_argument("--sched-idle", action="store_true",
                    help="also run lanes rlsp-drr with the switch process at SCHED_IDLE (how waking it differs)")  # fmt: skip
    ap.add_argument("--sched", default="",
                    help=f"also run lanes rlsp-drr at these CPU policies (comma-separated of {', '.join(CPU_POLICIES)})")  # fmt: skip
    ap.add_argument("--perf-sched", action="store_true",
                    help="after each idle size, a second run under `perf sched record`: how the data plane thread is woken")  # fmt: skip
    ap.add_argument("--only", default="",
                    help="run only these contenders (comma-separated, e.g. 'bridge,lanes rlsp-drr')")  # fmt: skip
    args = ap.parse_args()
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
        polls = [int(p) for p in args.poll_us.split(",") if p]
        replies = [int(p) for p in args.reply_poll_us.split(",") if p]
    except ValueError:
        sys.exit("switch_pingpong: --sizes, --poll-us and --reply-poll-us take comma-separated integers")
    if args.mps != "max" and not args.mps.isdigit():
        sys.exit(f"switch_pingpong: --mps takes a number or 'max', got {args.mps!r}")
    policies = [p for p in args.sched.split(",") if p] + (["idle"] if args.sched_idle else [])
    unknown_policy = [p for p in policies if p not in CPU_POLICIES]
    if unknown_policy:
        sys.exit(
            f"switch_pingpong: unknown --sched policy {unknown_policy[0]!r}; known: {', '.join(CPU_POLICIES)}"
        )
    contenders = CONTENDERS + [f"lanes rlsp-drr poll {p}" for p in polls]
    contenders += [f"lanes rlsp-drr reply {p}" for p in replies]
    contenders += [f"lanes rlsp-drr sched-{p}" for p in dict.fromkeys(policies)]
    if args.only:
        only = args.only.split(",")
        unknown = [c for c in only if c not in contenders]
        if unknown:
            sys.exit(f"switch_pingpong: unknown contender {unknown[0]!r}; known: {', '.join(contenders)}")
        contenders = [c for c in contenders if c in only]
    results: dict = {"command": " ".join(sys.argv), "date": time.strftime("%Y-%m-%d %H:%M")}
    runs: dict = {}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for i, contender in enumerate(contenders, 1):
            print(f"[{i}/{len(contenders)}] {contender}", flush=True)
            with Star(4) as star:
                setup(star, contender, tmp)
                runs[contender] = measure(
                    star, contender, tmp, args.seconds, sizes, args.perf_sched, args.mps
                )
                runs[contender]["load_avg"] = Path("/proc/loadavg").read_text().split()[:3]
    for cond in ("idle", "loaded"):
        print(f"\nround trip, {cond} (ms)\n" + table(runs, cond, sizes))
    results["runs"] = runs
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
