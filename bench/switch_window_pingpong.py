#!/usr/bin/env python3
"""sockperf ping-pong, UDP and TCP, from h1 to h4 through lanes rlsp-drr whose port 4 runs at
RATE and is saturated by h2 and h3 (60 % of the port each), once per batch window: what the
window costs a sparse high class that answers as a ping-pong does. 14 B and 1 KiB messages, idle
and loaded, round-trip p50 and p99 in ms (sockperf's half round trips doubled). Needs root.

    sudo .venv/bin/python bench/switch_window_pingpong.py --mbps 10 --windows 0,250,1000 [--json OUT]
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
from netns import Star, UdpFlows  # noqa: E402
from switch_latency import setup_lanes  # noqa: E402
from switch_pingpong import PERCENTILE  # noqa: E402

UDP_PORT, TCP_PORT = 11111, 11112


def pingpong(star: Star, size: int, tcp: bool, seconds: float) -> dict:
    args = ["sockperf", "ping-pong", "-i", star.ip(4), "-p", str(TCP_PORT if tcp else UDP_PORT),
            "-m", str(size), "-t", str(seconds), "--mps=200", *(["--tcp"] if tcp else [])]  # fmt: skip
    r = star.host(1, *args, timeout=seconds + 30)
    pct = {float(p): 2 * float(v) / 1000 for p, v in PERCENTILE.findall(r.stdout + r.stderr)}
    if 50.0 not in pct:
        raise RuntimeError(f"sockperf gave no percentiles: {r.stdout[-300:]}{r.stderr[-300:]}")
    return {"p50_ms": pct[50.0], "p99_ms": pct[99.0]}


def measure(mbps: int, window_us: str, seconds: float) -> dict:
    out: dict = {}
    with tempfile.TemporaryDirectory() as d, Star(4) as star:
        tmp = Path(d)
        setup_lanes(star, tmp, ["--batch-us", window_us], scheduler="rlsp-drr", port_mbps=mbps)
        star.start(star.hosts[3], "sockperf", "server", "-i", star.ip(4), "-p", str(UDP_PORT))
        star.start(star.hosts[3], "sockperf", "server", "--tcp", "-i", star.ip(4), "-p", str(TCP_PORT))
        time.sleep(0.5)
        for cond in ("idle", "loaded"):
            if cond == "loaded":
                (tmp / "load").mkdir()
                UdpFlows(star, tmp / "load", {2: 0.6 * mbps, 3: 0.6 * mbps}, seconds=4 * (seconds + 1.5) + 3)
                time.sleep(1.0)
            for proto in ("udp", "tcp"):
                for size in (14, 1024):
                    out[f"{cond} {proto} {size}"] = r = pingpong(star, size, proto == "tcp", seconds)
                    print(f"  window {window_us:>5} us  {cond:6s} {proto} {size:5d} B  p50 {r['p50_ms']:.3f}  "
                          f"p99 {r['p99_ms']:.3f} ms", flush=True)  # fmt: skip
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mbps", type=int, default=10, help="rate of the saturated port")
    ap.add_argument("--windows", default="0,250,1000", help="batch windows in us, comma-separated")
    ap.add_argument("--seconds", type=float, default=3.0, help="sockperf run per size")
    ap.add_argument("--json", type=Path, help="write the results here")
    args = ap.parse_args()
    if not 1 <= args.mbps <= 100_000 or not args.seconds > 0:
        sys.exit("switch_window_pingpong: --mbps must be 1 to 100000 and --seconds positive")
    windows = [w.strip() for w in args.windows.split(",") if w.strip()]
    if not windows or not all(w.replace(".", "", 1).isdigit() for w in windows):
        sys.exit("switch_window_pingpong: --windows takes comma-separated numbers")
    results = {"command": " ".join(sys.argv), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "mbps": args.mbps, "windows_us": {}}  # fmt: skip
    for i, w in enumerate(windows, 1):
        print(f"[{i}/{len(windows)}] window {w} us", flush=True)
        results["windows_us"][w] = measure(args.mbps, w, args.seconds)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
