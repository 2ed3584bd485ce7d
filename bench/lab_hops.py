#!/usr/bin/env python3
"""Where a high-class frame waits, hop by hop: runs `lanes lab run` once per contender on one
topology and case, then reads each switch's queueing delay (summary.json's queueing_delay_us,
from the switches' own delay histograms) along the path of every high flow, beside the flow's
one-way delay (iperf) and, per hop, the iperf goodput of all flows crossing that port against
the port's rate (a lower bound of its load: headers are not counted).

    sudo .venv/bin/python bench/lab_hops.py --out DIR [--topo tree2] [--case proactive]
        [--proto udp] [--link-mbps 10] [--duration 60] [--rounds N] [--trace] [--batch-us US]
        [--contenders strict,rlsp-drr,rlsp-drr@all,strict@all] [--report-only]

A contender is an algorithm (linux-htb too), with `@all` for `--classes-at all` (every switch
classifies by sender, not only the access switches); with `--rounds N` the contenders run in
turn N times. `--trace` (case mpi) also captures the MPI pair's small frames at every switch
port (frame_trace.py) and gives each hop what the switch held them, queue or not. Writes
DIR/hops.json and prints one table per run.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

import frame_trace  # noqa: E402
from lanes.emu.topo import Topology, build  # noqa: E402

LANES = REPO / ".venv" / "bin" / "lanes"
MAIN_PHASE = {"proactive": "high_present", "runtime": "prioritized", "mpi": "mpi"}


def path_of(topo: Topology, src: str, dst: str) -> list[tuple[str, int]]:
    """The (switch, egress port) hops from host `src` to host `dst`, by the switches' routes."""
    peer = {(lk.a, lk.a_port): lk.b for lk in topo.links} | {(lk.b, lk.b_port): lk.a for lk in topo.links}
    node, hops = topo.hosts[src].switch, []
    while node in topo.switches and len(hops) <= len(topo.switches):
        port = topo.out_port(node, topo.hosts[dst].ip)
        hops.append((node, port))
        node = peer[(node, port)]
    return hops


def ingress_ports(topo: Topology, src: str, dst: str) -> list[str]:
    """The interface each switch on the way from `src` to `dst` receives the frames on (sN-ethP)."""
    peer = {(lk.a, lk.a_port): (lk.b, lk.b_port) for lk in topo.links}
    peer |= {(lk.b, lk.b_port): (lk.a, lk.a_port) for lk in topo.links}
    prev = (src, 0)
    out = []
    for sw, port in path_of(topo, src, dst):
        out.append(f"{sw}-eth{peer[prev][1]}")
        prev = (sw, port)
    return out


def class_prio(initial: dict, switch: str, ip: str) -> int:
    """The priority (= queue id) a switch gives frames from `ip`: its longest matching source prefix."""
    addr = ipaddress.ip_address(ip)
    best = max((ipaddress.ip_network(p) for p in initial[switch] if addr in ipaddress.ip_network(p)),
               key=lambda n: n.prefixlen)  # fmt: skip
    return int(initial[switch][str(best)]["prio"])


def hops_of(run_dir: Path, topo: Topology, case: str) -> dict:
    """Per high flow: its one-way delay and the queueing delay of every hop, in the case's main phase."""
    if not (run_dir / "summary.json").is_file() or not (run_dir / "plan.json").is_file():
        sys.exit(f"lab_hops: {run_dir} holds no finished run (summary.json, plan.json)")
    s = json.loads((run_dir / "summary.json").read_text())
    initial = json.loads((run_dir / "plan.json").read_text())["initial"]
    phase = MAIN_PHASE[case]
    out: dict = {"valid": s["validity"]["valid"], "flows": {}}
    carried: dict[tuple[str, int], float] = {}
    for key, f in s["flows"].items():
        mbps = (f["phases"].get(phase) or {}).get("throughput_mbps") or 0.0
        for hop in path_of(topo, *key.split("->")):
            carried[hop] = carried.get(hop, 0.0) + mbps
    paths: list[tuple[str, dict]] = []  # (flow key, its figures) for every high flow or MPI direction
    for key, f in s["flows"].items():
        if f["class"] == "high" and phase in f["phases"]:
            st = f["phases"][phase]
            paths.append((key, {"owd_ms": st.get("owd_ms"), "loss_pct": st.get("loss_pct"),
                                "mbps": st.get("throughput_mbps")}))  # fmt: skip
    if case == "mpi" and s.get("mpi"):
        lat = s["mpi"]["latency_us"]
        figures = {"mpi_1KiB_us": lat.get("1024"), "mpi_16KiB_us": lat.get("16384")}
        a, b = topo.mpi_pair
        paths += [(f"{a}->{b}", figures), (f"{b}->{a}", figures)]
    for key, figures in paths:
        src, dst = key.split("->")
        rows = []
        for sw, port in path_of(topo, src, dst):
            qid = class_prio(initial, sw, topo.hosts[src].ip)
            d = s["queueing_delay_us"].get(sw, {}).get(str(port), {}).get(str(qid), {}).get(phase) or {}
            rows.append({"switch": sw, "port": port, "qid": qid, "pkts": d.get("pkts", 0),
                         "port_mbps": topo.port_rates(sw)[port], "goodput_mbps": round(carried.get((sw, port), 0.0), 3),
                         "mean_us": d.get("mean_us"), "p50_us": d.get("p50_us"), "p99_us": d.get("p99_us")})  # fmt: skip
        out["flows"][key] = {**figures, "hops": rows}
    trace = run_dir / "trace.txt"
    if case == "mpi" and trace.is_file() and (run_dir / "trace_start.json").is_file():
        add_held(out, topo, trace, json.loads((run_dir / "trace_start.json").read_text()))
    return out


def add_held(out: dict, topo: Topology, trace: Path, start: dict) -> None:
    """Each MPI hop's residence of the pair's small frames during the MPI phase, from the trace
    (the last switch's is not captured: its next stop is the host, in its own namespace)."""
    with trace.open() as f:
        recs = frame_trace.frames(f)
    since = start["load_start_unix"] + start["mpi_start_s"]
    for key, f in out["flows"].items():
        src, dst = key.split("->")
        if "mpi_1KiB_us" not in f:
            continue
        way = ingress_ports(topo, src, dst)
        held = frame_trace.residences(recs, topo.hosts[src].ip, way, since)
        for hop, seconds in zip(f["hops"], held, strict=False):  # the last hop has none
            frame_us = 1514 * 8 / hop["port_mbps"]
            hop["held"] = frame_trace.digest(seconds, frame_us)
        # the first switch, by how long before each frame the sender's previous one left it
        f["hops"][0]["held_by_phase"] = frame_trace.held_by_phase(recs, topo.hosts[src].ip, way[0], way[1], since)


def keep_held(now: dict, before: dict | None) -> None:
    """Keep the holds an earlier pass read from a trace no longer there (traces are not kept with
    the committed run directories: tens of MB each)."""
    for key, f in now["flows"].items():
        old_hops = ((before or {}).get("flows", {}).get(key) or {}).get("hops", [])
        for hop, old in zip(f["hops"], old_hops, strict=False):
            for k in ("held", "held_by_phase"):
                if k not in hop and k in old:
                    hop[k] = old[k]


def run(args: argparse.Namespace, name: str, run_dir: Path) -> None:
    """One lab run; with --trace, tcpdump from the moment the load starts to the run's end."""
    alg, _, where = name.partition("@")
    cmd = [str(LANES), "lab", "run", "--topo", args.topo, "--case", args.case, "--alg", alg,
           "--proto", args.proto, "--link-mbps", f"{args.link_mbps:g}", "--duration", f"{args.duration:g}",
           "--classes-at", where or "access", "--out", str(run_dir)]  # fmt: skip
    if args.batch_us is not None:
        cmd += ["--batch-us", f"{args.batch_us:g}"]
    print(f"{time.strftime('%H:%M:%S')} {name}: {' '.join(cmd[1:])}", flush=True)
    tracer = None
    last = ""
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        try:
            for line in proc.stdout or ():
                if line.strip():
                    last = line.strip()
                    print(f"  {last}", flush=True)  # the run's own progress
                if args.trace and tracer is None and "] load:" in line:
                    run_dir.mkdir(parents=True, exist_ok=True)
                    start = {"load_start_unix": time.time(), "mpi_start_s": 3.0}
                    tracer = frame_trace.start(args.mpi_ips, run_dir / "trace.txt")
        finally:
            if tracer is not None:
                frame_trace.stop(tracer)
    if tracer is not None:
        plan = json.loads((run_dir / "plan.json").read_text()) if (run_dir / "plan.json").is_file() else {}
        start["mpi_start_s"] = plan.get("mpi_start_s", start["mpi_start_s"])
        (run_dir / "trace_start.json").write_text(json.dumps(start))
    if proc.returncode != 0:
        sys.exit(f"lab_hops: {name} failed: {last or proc.returncode}")


def fmt(v: float | None, nd: int = 0) -> str:
    return "-" if v is None else f"{v:.{nd}f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--topo", default="tree2")
    ap.add_argument("--case", default="proactive", choices=list(MAIN_PHASE))
    ap.add_argument("--proto", default="udp")
    ap.add_argument("--link-mbps", type=float, default=10.0)
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--contenders", default="strict,rlsp-drr,rlsp-drr@all,strict@all")
    ap.add_argument("--batch-us", type=float, help="the lanes switches' batch window (default: theirs)")
    ap.add_argument("--rounds", type=int, default=1, help="run the contenders in turn N times")
    ap.add_argument(
        "--trace", action="store_true", help="case mpi: what each switch held the pair's small frames"
    )
    ap.add_argument("--report-only", action="store_true", help="read the run directories, run nothing")
    args = ap.parse_args()
    names = [c.strip() for c in args.contenders.split(",") if c.strip()]
    if args.rounds < 1 or not names:
        sys.exit("lab_hops: --rounds must be at least 1 and --contenders name one or more")
    topo = build(args.topo, args.link_mbps)
    args.mpi_ips = tuple(topo.hosts[h].ip for h in topo.mpi_pair)
    runs = [(f"{n} r{k}" if args.rounds > 1 else n, n, k) for k in range(1, args.rounds + 1) for n in names]
    args.out.mkdir(parents=True, exist_ok=True)
    result: dict = {"topo": args.topo, "case": args.case, "proto": args.proto, "link_mbps": args.link_mbps,
                    "duration_s": args.duration, "contenders": {}}  # fmt: skip
    before = json.loads((args.out / "hops.json").read_text()) if (args.out / "hops.json").exists() else {}
    for label, name, k in runs:
        run_dir = args.out / (name.replace("@", "-at-") + (f"-r{k}" if args.rounds > 1 else ""))
        if not args.report_only:
            run(args, name, run_dir)
        # the load when the run ended; a report-only pass keeps what the run recorded
        load1 = round(os.getloadavg()[0], 2) if not args.report_only else None
        load1 = load1 if load1 is not None else before.get("contenders", {}).get(label, {}).get("load1")
        result["contenders"][label] = {"load1": load1, **hops_of(run_dir, topo, args.case)}
        keep_held(result["contenders"][label], before.get("contenders", {}).get(label))
    (args.out / "hops.json").write_text(json.dumps(result, indent=1))
    for name, c in result["contenders"].items():
        for key, f in c["flows"].items():
            what = ", ".join(f"{k} {fmt(v, 3)}" for k, v in f.items() if k != "hops")
            print(f"\n{name} {key}: {what}, valid {c['valid']}")
            print(
                "  switch port qid   pkts   mean us   p50 us   p99 us   goodput / port Mb/s   held p50 / p90 us"
            )
            for h in f["hops"]:
                held = h.get("held") or {}
                print(f"  {h['switch']:>6} {h['port']:>4} {h['qid']:>3} {h['pkts']:>6} {fmt(h['mean_us']):>9} "
                      f"{fmt(h['p50_us']):>8} {fmt(h['p99_us']):>8}   {h['goodput_mbps']:.2f} / {h['port_mbps']:g}"
                      f"   {fmt(held.get('p50_us'))} / {fmt(held.get('p90_us'))}")  # fmt: skip
    print(f"\nlab_hops: {args.out / 'hops.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
