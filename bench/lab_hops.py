#!/usr/bin/env python3
"""Where a high-class frame waits, hop by hop: runs `lanes lab run` once per contender on one
topology and case, then reads each switch's queueing delay (summary.json's queueing_delay_us,
from the switches' own delay histograms) along the path of every high flow, beside the flow's
one-way delay (iperf) and, per hop, the iperf goodput of all flows crossing that port against
the port's rate (a lower bound of its load: headers are not counted).

    sudo .venv/bin/python bench/lab_hops.py --out DIR [--topo tree2] [--case proactive]
        [--proto udp] [--link-mbps 10] [--duration 60]
        [--contenders strict,rlsp-drr,rlsp-drr@all,strict@all] [--report-only]

A contender is an algorithm, with `@all` for `--classes-at all` (every switch classifies by
sender, not only the access switches). Writes DIR/hops.json and prints one table per contender.
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
    return out


def run(args: argparse.Namespace, name: str) -> None:
    alg, _, where = name.partition("@")
    cmd = [str(LANES), "lab", "run", "--topo", args.topo, "--case", args.case, "--alg", alg,
           "--proto", args.proto, "--link-mbps", f"{args.link_mbps:g}", "--duration", f"{args.duration:g}",
           "--classes-at", where or "access", "--out", str(args.out / name.replace("@", "-at-"))]  # fmt: skip
    print(f"{time.strftime('%H:%M:%S')} {name}: {' '.join(cmd[1:])}", flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        sys.exit(
            f"lab_hops: {name} failed: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}"
        )


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
    ap.add_argument("--report-only", action="store_true", help="read the run directories, run nothing")
    args = ap.parse_args()
    names = [c.strip() for c in args.contenders.split(",") if c.strip()]
    topo = build(args.topo, args.link_mbps)
    args.out.mkdir(parents=True, exist_ok=True)
    result: dict = {"topo": args.topo, "case": args.case, "proto": args.proto, "link_mbps": args.link_mbps,
                    "duration_s": args.duration, "contenders": {}}  # fmt: skip
    before = json.loads((args.out / "hops.json").read_text()) if (args.out / "hops.json").exists() else {}
    for name in names:
        if not args.report_only:
            run(args, name)
        # the load when the run ended; a report-only pass keeps what the run recorded
        load1 = round(os.getloadavg()[0], 2) if not args.report_only else None
        load1 = load1 if load1 is not None else before.get("contenders", {}).get(name, {}).get("load1")
        result["contenders"][name] = {"load1": load1,
                                      **hops_of(args.out / name.replace("@", "-at-"), topo, args.case)}  # fmt: skip
    (args.out / "hops.json").write_text(json.dumps(result, indent=1))
    for name, c in result["contenders"].items():
        for key, f in c["flows"].items():
            what = ", ".join(f"{k} {fmt(v, 3)}" for k, v in f.items() if k != "hops")
            print(f"\n{name} {key}: {what}, valid {c['valid']}")
            print("  switch port qid   pkts   mean us   p50 us   p99 us   goodput / port Mb/s")
            for h in f["hops"]:
                print(f"  {h['switch']:>6} {h['port']:>4} {h['qid']:>3} {h['pkts']:>6} {fmt(h['mean_us']):>9} "
                      f"{fmt(h['p50_us']):>8} {fmt(h['p99_us']):>8}   {h['goodput_mbps']:.2f} / {h['port_mbps']:g}")  # fmt: skip
    print(f"\nlab_hops: {args.out / 'hops.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
