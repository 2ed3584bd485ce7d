"""How long each switch held a frame, from tcpdump on the switches' ports.

The lab's switch ports live in the root namespace, named `sN-ethP` after their port. tcpdump there
sees every frame arrive at each switch on its way (the port's peer sent it): a frame's arrival at
the next switch is its departure from this one plus a veth hop of microseconds. So the time between
two arrivals is the switch's residence: its receive ring, its queue and the frame in flight ahead
of it. Departures themselves are not captured: lanes sends with the qdisc bypassed, which taps do
not see, and arrivals alone treat lanes and a kernel bridge the same way.
"""

from __future__ import annotations

import bisect
import re
import statistics
import subprocess
from collections.abc import Iterable
from pathlib import Path

# "1795854388.474312 s3-eth1 P   IP 10.0.3.7.35216 > 10.0.1.1.40711: Flags [P.], seq 1:14, ack 1, ..., length 13"
LINE = re.compile(
    r"^(?P<t>\d+\.\d+) (?P<ifc>s\d+-eth\d+) \S+\s+IP (?P<src>[\d.]+)\.(?P<sport>\d+) > (?P<dst>[\d.]+)\.(?P<dport>\d+): "
    r"Flags \[(?P<flags>[^\]]*)\], (?P<rest>.*)length (?P<len>\d+)"
)


def start(hosts_ips: tuple[str, str], out: Path, max_len: int = 155) -> subprocess.Popen:
    """tcpdump every switch port's arrivals of TCP frames between the two hosts of at most
    `max_len` bytes as the any device counts them (a 20-B cooked header, IP, TCP with timestamps:
    at 155, a payload of at most 83 B), the small messages; large transfers queue behind themselves."""
    a, b = hosts_ips
    expr = f"tcp and host {a} and host {b} and less {max_len}"
    with out.open("w") as f:
        return subprocess.Popen(
            ["tcpdump", "-i", "any", "-nn", "-tt", "-l", "-Q", "in", expr],
            stdout=f, stderr=subprocess.DEVNULL,
        )  # fmt: skip


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def frames(lines: Iterable[str]) -> list[dict]:
    """One record per frame with payload: {"src", "dst", "arrivals": {interface: first time}}.
    A frame is known by its addresses and ports, flags, sequence/ack text and length (a retransmission
    looks the same and counts once, at its first sight)."""
    seen: dict[tuple, dict] = {}
    for line in lines:
        m = LINE.match(line)
        if not m or int(m["len"]) == 0:
            continue
        key = (m["src"], m["sport"], m["dst"], m["dport"], m["flags"], m["rest"].split(", win")[0], m["len"])
        rec = seen.setdefault(key, {"src": m["src"], "dst": m["dst"], "arrivals": {}})
        rec["arrivals"].setdefault(m["ifc"], float(m["t"]))
    return list(seen.values())


def residences(recs: list[dict], src_ip: str, ingress: list[str], since: float) -> list[list[float]]:
    """For frames from `src_ip` first seen at `ingress[0]` at or after `since` (unix s): per switch
    on the path but the last, the seconds from its arrival there to its arrival at the next
    (`ingress` lists each switch's port toward the sender, in path order)."""
    out = [[] for _ in ingress[:-1]]
    for r in recs:
        arr = r["arrivals"]
        if r["src"] != src_ip or not all(i in arr for i in ingress) or arr[ingress[0]] < since:
            continue
        for k in range(len(ingress) - 1):
            out[k].append(arr[ingress[k + 1]] - arr[ingress[k]])
    return out


def held_by_phase(recs: list[dict], src_ip: str, here: str, nxt: str, since: float) -> dict:
    """What the switch whose port `here` receives frames from `src_ip` held them (until they
    reached `nxt`), by how long before each arrival the sender's previous frame left that switch:
    200-us bins of that gap, {lower edge: {frames, p50_us}}; 2400 holds every longer gap. At a
    port a work-conserving scheduler keeps full, the lower classes' next frame starts as the
    sender's frame leaves, so a ping-pong's next frame finds it that far into its frame time."""
    frames = sorted(
        (r["arrivals"][here], r["arrivals"][nxt])
        for r in recs
        if r["src"] == src_ip and here in r["arrivals"] and nxt in r["arrivals"] and r["arrivals"][here] >= since
    )
    left: list[float] = []
    bins: dict[int, list[float]] = {}
    for came, went in frames:
        i = bisect.bisect_left(left, came) - 1
        if i >= 0:
            edge = min(2400, int(round(1e6 * (came - left[i]), 1) // 200) * 200)
            bins.setdefault(edge, []).append(1e6 * (went - came))
        bisect.insort(left, went)
    return {e: {"frames": len(v), "p50_us": round(statistics.median(v), 1)} for e, v in sorted(bins.items())}


HIST_BIN_US = 25
HIST_TOP_US = 5000  # the last bin holds everything held this long or longer


def digest(seconds: list[float], frame_us: float) -> dict:
    """Median, 90th percentile and mean in us, the share held longer than one frame time of the
    port (`frame_us`: a full-size frame at its rate), the most a frame in flight can add, and
    every frame in 25-us bins ({lower edge: frames}) to check them by."""
    if not seconds:
        return {"frames": 0}
    us = sorted(1e6 * s for s in seconds)
    hist: dict[int, int] = {}
    for u in us:
        edge = min(HIST_TOP_US, max(0, int(u // HIST_BIN_US) * HIST_BIN_US))
        hist[edge] = hist.get(edge, 0) + 1
    return {
        "frames": len(us),
        "p50_us": round(statistics.median(us), 1),
        "p90_us": round(us[int(0.9 * (len(us) - 1))], 1),
        "mean_us": round(statistics.fmean(us), 1),
        "frame_us": round(frame_us, 1),
        "over_frame_pct": round(100.0 * sum(u > frame_us for u in us) / len(us), 1),
        "hist_25us": hist,
    }
