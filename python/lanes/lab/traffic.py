"""iperf 2 traffic: command lines and the parser of its enhanced (-e) interval reports.

The receiving side's per-second lines carry throughput, and for UDP jitter, loss and, with
--trip-times on the client, one-way latency (all hosts share one clock in Mininet)."""

from __future__ import annotations

import re
from dataclasses import dataclass

PROTOCOLS = ["udp", "tcp"]  # the load a lab run puts on the network
BASE_PORT = 5001
UDP_LEN = 1470  # iperf 2's default datagram: 1512 B frames with the 42 B of headers

_UNITS = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}
_LINE = re.compile(
    r"^\[\s*(?P<id>\d+)\]\s+(?P<a>[\d.]+)\s*-\s*(?P<b>[\d.]+)\s+sec\s+(?P<bytes>[\d.]+)\s+(?P<bu>[KMG]?)Bytes\s+"
    r"(?P<rate>[\d.]+)\s+(?P<ru>[KMG]?)bits/sec(?P<rest>.*)$"
)
_UDP = re.compile(
    r"^\s*(?P<jitter>[\d.]+)\s+ms\s+(?P<lost>-?\d+)/\s*(?P<total>\d+)\s+\((?P<pct>[^%]+)%\)"
    r"(?:\s+(?P<avg>[\d.]+)/(?P<min>[\d.]+)/(?P<max>[\d.]+)/(?P<std>[\d.]+)\s+ms)?"
)

# a TCP client's interval line with -e: "... Mbits/sec  10885/0  5  1023K/90(60) us ..." (writes/errors, retries)
_CLIENT_TCP = re.compile(
    r"^\[\s*\d+\]\s+(?P<a>[\d.]+)\s*-\s*(?P<b>[\d.]+)\s+sec\s+[\d.]+\s+[KMG]?Bytes\s+[\d.]+\s+[KMG]?bits/sec"
    r"\s+\d+/\d+\s+(?P<rtry>\d+)\s"
)


@dataclass
class Interval:
    start_s: float  # relative to the connection start
    end_s: float
    mbps: float
    lost: int | None = None
    total: int | None = None
    owd_ms: float | None = None
    owd_max_ms: float | None = None


def server_cmd(proto: str, port: int) -> list[str]:
    cmd = ["stdbuf", "-oL", "iperf", "-s", "-e", "-i", "1", "-p", str(port)]
    # a large socket buffer, so a receiver that waits for a core does not drop datagrams itself
    return cmd + (["-u", "-w", "4M"] if proto == "udp" else [])


def udp_counters(snmp: str) -> dict[str, int]:
    """The Udp: line pair of /proc/net/snmp as a dict (InDatagrams, RcvbufErrors, ...)."""
    rows = [ln.split()[1:] for ln in snmp.splitlines() if ln.startswith("Udp:")]
    if len(rows) < 2:
        return {}
    return {k: int(v) for k, v in zip(rows[0], rows[1], strict=False)}


def client_cmd(
    proto: str, dst_ip: str, port: int, seconds: float, udp_mbps: float, txstart: float | None = None,
    udp_len: int = UDP_LEN,
) -> list[str]:
    cmd = ["stdbuf", "-oL", "iperf", "-c", dst_ip, "-p", str(port), "-e", "-i", "1", "--trip-times"]
    cmd += ["-t", f"{seconds:.0f}"]
    if txstart is not None:
        cmd += ["--txstart-time", f"{txstart:.6f}"]
    if proto == "udp":
        cmd += ["-u", "-b", f"{udp_mbps:g}M", "-l", str(udp_len)]
    return cmd


def parse_server(text: str) -> list[Interval]:
    """Per-second intervals of the first connection (summary lines over longer spans dropped)."""
    out: list[Interval] = []
    first = None
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if not m:
            continue
        # a later connection (a client's retried end-of-test datagrams) is not the measurement
        first = m["id"] if first is None else first
        if m["id"] != first:
            continue
        a, b = float(m["a"]), float(m["b"])
        if b - a > 1.5 or b <= a:
            continue
        mbps = float(m["rate"]) * _UNITS[m["ru"]] / 1e6
        iv = Interval(a, b, mbps)
        u = _UDP.match(m["rest"])
        if u:
            iv.lost = max(0, int(u["lost"]))
            iv.total = int(u["total"])
            if u["avg"] is not None:
                iv.owd_ms = float(u["avg"])
                iv.owd_max_ms = float(u["max"])
        out.append(iv)
    return out


def parse_client_retries(text: str) -> list[tuple[float, int]]:
    """(interval end in s since the connection started, TCP retransmissions) per one-second line of
    an iperf 2 TCP client's enhanced report; the whole-run summary line is left out."""
    out = []
    for line in text.splitlines():
        m = _CLIENT_TCP.match(line.strip())
        if m and 0 < float(m["b"]) - float(m["a"]) <= 1.5:
            out.append((float(m["b"]), int(m["rtry"])))
    return out
