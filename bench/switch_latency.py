#!/usr/bin/env python3
"""The bar set for the switch: high-class ping RTT at a saturated 100 Mb/s port, lanes (rlsp-drr,
tm_basic) next to the Linux kernel (bridge + tc HTB shaped like RL-SP-DRR) between the same
namespaces in the same run, with the low classes' shares.

    sudo .venv/bin/python bench/switch_latency.py [--runs 3] [--json OUT]

h1 is the high class (60 % of the port, strict), h2 and h3 the low classes (DRR, quantum 7000,
20 % each guaranteed, 100 % ceiling), all toward h4 over a 100 Mb/s port. h2 and h3 each offer
60 Mb/s of UDP; h1 pings h4 every 10 ms. Needs root.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from netns import Star, UdpFlows, ping_rtts

LANES_COMMANDS = "\n".join(
    [f"table_add ipv4_lpm ipv4_forward 10.0.1.{i}/32 => 00:00:00:00:01:0{i} {i}" for i in range(1, 5)]
    + [
        "table_add src_ip_prio set_priority 10.0.1.1/32 => 7 7500000 7000",
        "table_add src_ip_prio set_priority 10.0.1.2/32 => 6 0 7000",
        "table_add src_ip_prio set_priority 10.0.1.3/32 => 5 0 7000",
        "table_add src_ip_prio set_priority 10.0.1.4/32 => 7 7500000 7000",
    ]
)

# class, src, rate, ceil, prio (rates in % of the port): the kernel's nearest equivalent of RL-SP-DRR
HTB_CLASSES = [
    ("1:10", "10.0.1.1", 60, 60, 0),
    ("1:20", "10.0.1.2", 20, 100, 1),
    ("1:30", "10.0.1.3", 20, 100, 1),
]


def setup_lanes(
    star: Star,
    tmp: Path,
    extra: list[str],
    scheduler: str = "rlsp-drr",
    port_mbps: int = 100,
    chrt: tuple[str, ...] = ("-f", "20"),
) -> None:
    cmds = tmp / "commands.txt"
    # the high class's rate: 60 % of the port, in bytes/s
    cmds.write_text(LANES_COMMANDS.replace(" 7500000 ", f" {port_mbps * 75_000} "))
    star.start_switch(
        str(REPO / "p4" / "tm_basic.json"),
        "--scheduler",
        scheduler,
        "--port-rate",
        f"4@{port_mbps}Mbps",
        "--default-rate",
        "1Gbps",
        "--commands",
        str(cmds),
        *extra,
        log=tmp / "switch.log",
        chrt=chrt,
    )


def setup_htb(star: Star, port_mbps: int = 100) -> None:
    sw = star.sw
    star.ns(sw, "ip", "link", "add", "br0", "type", "bridge")
    for i in range(1, len(star.hosts) + 1):
        star.ns(sw, "ip", "link", "set", f"s1-eth{i}", "master", "br0")
    star.ns(sw, "ip", "link", "set", "br0", "up")
    star.ns(sw, "tc", "qdisc", "add", "dev", "s1-eth4", "root", "handle", "1:", "htb", "default", "30")
    star.ns(
        sw,
        "tc",
        "class",
        "add",
        "dev",
        "s1-eth4",
        "parent",
        "1:",
        "classid",
        "1:1",
        "htb",
        "rate",
        f"{port_mbps}mbit",
    )
    for cls, src, rate, ceil, prio in HTB_CLASSES:
        star.ns(
            sw,
            "tc",
            "class",
            "add",
            "dev",
            "s1-eth4",
            "parent",
            "1:1",
            "classid",
            cls,
            "htb",
            "rate",
            f"{rate * port_mbps // 100}mbit",
            "ceil",
            f"{ceil * port_mbps // 100}mbit",
            "prio",
            str(prio),
            "quantum",
            "7000",
        )
        star.ns(
            sw,
            "tc",
            "filter",
            "add",
            "dev",
            "s1-eth4",
            "parent",
            "1:",
            "protocol",
            "ip",
            "prio",
            "1",
            "u32",
            "match",
            "ip",
            "src",
            f"{src}/32",
            "flowid",
            cls,
        )


def measure(star: Star, tmp: Path, tag: str) -> dict:
    idle = ping_rtts(star, 1, 4, 50)
    log_dir = tmp / tag
    log_dir.mkdir()
    load = UdpFlows(star, log_dir, {2: 60, 3: 60}, seconds=6)
    time.sleep(1.0)
    loaded = ping_rtts(star, 1, 4, 300)
    low = {f"h{h}": v["mbps"] * 1442 / 1400 for h, v in load.received().items()}
    q = statistics.quantiles(loaded, n=100)
    extra = {}
    if tag.startswith("lanes"):
        # the switch's own view: time the high class spent queued at the congested port
        extra["switch_high_queue_delay"] = star.ctl("show_delay 4").strip()
    return {
        **extra,
        "idle_p50_ms": statistics.median(idle),
        "loaded_p50_ms": statistics.median(loaded),
        "loaded_p99_ms": q[98],
        "loaded_max_ms": max(loaded),
        "pings_answered": len(loaded),
        "low_class_mbps_on_wire": low,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per contender")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument(
        "--lanes-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="pass ARG to lanes switch (repeat; e.g. --lanes-arg=--batch-us --lanes-arg=0)",
    )
    args = ap.parse_args()
    results: dict[str, list] = {"lanes rlsp-drr": [], "linux htb": []}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for run in range(args.runs):
            for label, runs in results.items():
                with Star(4) as star:
                    if label == "linux htb":
                        setup_htb(star)
                    else:
                        setup_lanes(star, tmp, args.lanes_arg)
                    r = measure(star, tmp, f"{label[:5]}{run}")
                runs.append(r)
                print(
                    f"[{run + 1}/{args.runs}] {label:15s} idle p50 {r['idle_p50_ms']:.3f} ms, loaded p50 "
                    f"{r['loaded_p50_ms']:.3f} p99 {r['loaded_p99_ms']:.3f} max {r['loaded_max_ms']:.3f} ms, "
                    f"{r['pings_answered']}/300 answered, low classes "
                    + " ".join(f"{k} {v:.1f}" for k, v in r["low_class_mbps_on_wire"].items())
                    + " Mb/s",
                    flush=True,
                )
    print("\nmedian over runs:")
    for label, runs in results.items():
        med = {
            k: statistics.median(r[k] for r in runs)
            for k in ("idle_p50_ms", "loaded_p50_ms", "loaded_p99_ms")
        }
        print(f"  {label:15s} " + ", ".join(f"{k} {v:.3f}" for k, v in med.items()))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
