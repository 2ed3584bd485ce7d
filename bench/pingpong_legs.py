#!/usr/bin/env python3
"""Where an idle ping-pong's round trip goes, leg by leg, by message size: sockperf UDP ping-pong
h1 -> h4 through one switch (the kernel's bridge, then lanes rlsp-drr as switch_pingpong.py sets
them up), with tcpdump taking each frame's arrival at the switch and at the far host. Per
message size and contender, the median of: the switch's hold of a request (its arrival at h4
less its arrival at the switch's port from h1), h4's turn-around (its answer's arrival at the
switch less the request's arrival at h4) and the switch's hold of the answer (its arrival at h1
less its arrival at the switch); h1's wait before its next request is sockperf's pacing. Frames are matched by IP id and direction, so
only sizes that fit one frame (at most 1472 B) are taken. Needs root.

    sudo .venv/bin/python bench/pingpong_legs.py [--sizes 14,512,1024,1472] [--seconds 3] [--json OUT]

tcpdump adds its own copy of each frame at four taps; both contenders pay it alike.
"""

from __future__ import annotations

import argparse
import bisect
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))
from netns import Star  # noqa: E402
from switch_pingpong import pingpong, setup  # noqa: E402

CONTENDERS = ["bridge", "lanes rlsp-drr"]
# tcpdump -v writes "1764000000.123456789 IP (tos 0x0, ttl 64, id 4242, offset 0, ...)" and on the
# next line "    10.0.1.1.37000 > 10.0.1.4.11111: UDP, length 14"
HEAD = re.compile(r"^(\d+)\.(\d{9}) IP \(.*?\bid (\d+),")
ADDR = re.compile(r"^\s+(\d+\.\d+\.\d+\.\d+)\.\d+ > ")
# where each capture runs: (namespace of, interface, label)
TAPS = [("sw", "s1-eth1", "req_at_switch"), (4, "eth0", "req_at_h4"), ("sw", "s1-eth4", "ans_at_switch"),
        (1, "eth0", "ans_at_h1")]  # fmt: skip


def arrivals(text: str, src: str) -> dict[int, int]:
    """IP id -> arrival time (ns) of frames from `src` in a tcpdump -v capture (first one kept)."""
    out: dict[int, int] = {}
    head = None
    for line in text.splitlines():
        if m := HEAD.match(line):
            head = (int(m.group(1)) * 10**9 + int(m.group(2)), int(m.group(3)))
        elif (m := ADDR.match(line)) and head is not None:
            if m.group(1) == src:
                out.setdefault(head[1], head[0])
            head = None
    return out


def legs(caps: dict[str, str], h1: str, h4: str) -> dict[str, float | int]:
    """Median of each leg in us, over the requests seen at every tap, and how many there were."""
    req_sw, req_h4 = arrivals(caps["req_at_switch"], h1), arrivals(caps["req_at_h4"], h1)
    ans_sw, ans_h1 = arrivals(caps["ans_at_switch"], h4), arrivals(caps["ans_at_h1"], h4)
    # answers in order of their arrival at the switch, each paired with the request before it
    answers = sorted((t, i) for i, t in ans_sw.items() if i in ans_h1)
    times = [t for t, _ in answers]
    hold_req, turn, hold_ans = [], [], []
    for i, t_sw in req_sw.items():
        if i not in req_h4:
            continue
        k = bisect.bisect_right(times, req_h4[i])
        if k == len(answers):
            continue
        t_ans, j = answers[k]
        hold_req.append(req_h4[i] - t_sw)
        turn.append(t_ans - req_h4[i])
        hold_ans.append(ans_h1[j] - t_ans)
    med = lambda v: round(statistics.median(v) / 1e3, 1) if v else None  # noqa: E731
    return {"pairs": len(hold_req), "switch_hold_request_us": med(hold_req), "h4_turnaround_us": med(turn),
            "switch_hold_answer_us": med(hold_ans)}  # fmt: skip


def run(contender: str, sizes: list[int], seconds: float, tmp: Path) -> dict:
    out = {}
    with Star(4) as star:
        setup(star, contender, tmp)
        star.start(star.hosts[3], "sockperf", "server", "-i", star.ip(4), "-p", "11111")
        time.sleep(0.5)
        for size in sizes:
            files = {}
            procs = []
            for where, ifname, label in TAPS:
                ns = star.sw if where == "sw" else star.hosts[where - 1]
                files[label] = tmp / f"{contender.replace(' ', '_')}_{size}_{label}.txt"
                cmd = ["tcpdump", "-i", ifname, "-Q", "in", "-nn", "-v", "-l", "-tt", "--nano",
                       "udp", "port", "11111"]  # fmt: skip
                procs.append(star.start(ns, *cmd, log=files[label]))
            time.sleep(1.0)
            rtt = pingpong(star, size, seconds, "1000")
            time.sleep(0.5)
            for p in procs:
                p.terminate()
                p.wait(timeout=10)
            caps = {k: f.read_text() for k, f in files.items()}
            out[size] = {"rtt": rtt, **legs(caps, star.ip(1), star.ip(4))}
            print(f"  {contender:15s} {size:5d} B  rtt p50 {rtt['p50_ms']:.3f} ms  {out[size]}", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="14,512,1024,1472")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if max(sizes) > 1472:
        print("pingpong_legs: sizes must fit one frame (at most 1472 B)", file=sys.stderr)
        return 2
    results = {}
    with tempfile.TemporaryDirectory() as d:
        for c in CONTENDERS:
            results[c] = run(c, sizes, args.seconds, Path(d))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
