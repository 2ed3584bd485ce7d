#!/usr/bin/env python3
"""How long each TCP segment from one host took through the switch to another: two captures of
the same run, one at the sender's interface and one at the receiver's (the namespaces share one
clock), matched by addresses, ports, sequence and acknowledgement numbers and length. Prints and
writes the one-way delays of the sender's data segments in a time window of the capture, as a
histogram in 0.1 ms bins (the last bin holds 2 ms and more), with the median and mean.

    sudo nsenter -t PID_OF_h1 -n tcpdump --immediate-mode -s 128 -i h1-eth0 -w h1.pcap tcp &
    sudo nsenter -t PID_OF_h4 -n tcpdump --immediate-mode -s 128 -i h4-eth0 -w h4.pcap tcp &
    bench/mpi_capture_owd.py h1.pcap h4.pcap --src 10.0.1.1 --from 0.5 --to 2.0 --json OUT

A capture at the sender's interface sees a segment when it leaves the host's qdisc for the
switch; one at the receiver's, when the switch has sent it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

BIN_MS = 0.1
BINS = 21


def segments(pcap: Path) -> list[tuple[float, tuple[str, str, str, str, int]]]:
    """(time, (src, dst, seq, ack, payload length)) of every TCP segment in `pcap`."""
    r = subprocess.run(["tcpdump", "-tt", "-n", "-r", str(pcap), "tcp"], capture_output=True, text=True)
    if r.returncode != 0:
        why = (r.stderr.strip().splitlines() or ["no reason given"])[-1]
        raise ValueError(f"{pcap}: tcpdump cannot read it: {why}")
    out = []
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) < 5 or f[1] != "IP":
            continue
        seq = line.split("seq ")[1].split(",")[0] if "seq " in line else ""
        ack = line.split("ack ")[1].split(",")[0] if "ack " in line else ""
        length = int(line.rsplit("length ", 1)[1].split()[0].rstrip(":")) if "length " in line else 0
        out.append((float(f[0]), (f[2], f[4].rstrip(":"), seq, ack, length)))
    return out


def one_way_ms(sent: Path, received: Path, src: str, lo: float, hi: float) -> list[float]:
    """Delays of `src`'s data segments sent between `lo` and `hi` s after the first capture's start."""
    first_seen: dict[tuple, float] = {}
    for t, k in segments(received):
        first_seen.setdefault(k, t)
    out = segments(sent)
    if not out:
        raise ValueError(f"{sent}: no TCP segments")
    t0 = out[0][0]
    return [
        (first_seen[k] - t) * 1e3
        for t, k in out
        if lo <= t - t0 < hi and k[0].rsplit(".", 1)[0] == src and k[4] > 0 and first_seen.get(k, -1.0) >= t
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sent", type=Path, help="capture at the sender's interface")
    ap.add_argument("received", type=Path, help="capture at the receiver's interface")
    ap.add_argument("--src", required=True, help="the sender's IPv4 address")
    ap.add_argument(
        "--from", dest="lo", type=float, default=0.0, help="window start, s into the sender's capture"
    )
    ap.add_argument(
        "--to", dest="hi", type=float, default=1e9, help="window end, s into the sender's capture"
    )
    ap.add_argument("--json", type=Path, help="write the histogram here")
    args = ap.parse_args()
    try:
        v = one_way_ms(args.sent, args.received, args.src, args.lo, args.hi)
    except (OSError, ValueError) as e:
        sys.exit(f"mpi_capture_owd: {e}")
    if not v:
        sys.exit("mpi_capture_owd: no data segment of --src found in both captures within the window")
    hist = [0] * BINS
    for x in v:
        hist[min(int(x / BIN_MS), BINS - 1)] += 1
    result = {
        "command": " ".join(sys.argv),
        "segments": len(v),
        "bin_ms": BIN_MS,
        "hist": hist,
        "p50_ms": round(statistics.median(v), 3),
        "mean_ms": round(statistics.mean(v), 3),
    }
    print(json.dumps(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
