"""iperf 2 traffic: command lines and the parser of its enhanced (-e) interval reports.

The receiving side's per-second lines carry throughput, and for UDP jitter, loss and, with
--trip-times on the client, one-way latency (all hosts share one clock in Mininet): its mean and
maximum, and a histogram of every datagram's latency in 1-us bins."""

from __future__ import annotations

import re
from dataclasses import dataclass

PROTOCOLS = ["udp", "tcp"]  # the load a lab run puts on the network
BASE_PORT = 5001
UDP_LEN = 1470  # iperf 2's default datagram: 1512 B frames with the 42 B of headers
OWD_BIN_US = 1  # the receive histograms' bin width; per-datagram percentiles come from them
OWD_BINS = 50_000  # so up to 50 ms; a later datagram is counted as beyond

_UNITS = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}
_LINE = re.compile(
    r"^\[\s*(?P<id>\d+)\]\s+(?P<a>[\d.]+)\s*-\s*(?P<b>[\d.]+)\s+sec\s+(?P<bytes>[\d.]+)\s+(?P<bu>[KMG]?)Bytes\s+"
    r"(?P<rate>[\d.]+)\s+(?P<ru>[KMG]?)bits/sec(?P<rest>.*)$"
)
_UDP = re.compile(
    r"^\s*(?P<jitter>[\d.]+)\s+ms\s+(?P<lost>-?\d+)/\s*(?P<total>\d+)\s+\((?P<pct>[^%]+)%\)"
    r"(?:\s+(?P<avg>[\d.]+)/(?P<min>[\d.]+)/(?P<max>[\d.]+)/(?P<std>[\d.]+)\s+ms)?"
)

# the histogram line that follows a UDP interval line when the server runs with --histograms:
# "[  1] 0.0000-1.0000 sec T8-PDF: bin(w=1us):cnt(893)=2:1,3:309 (5.00/95.00/99.7%=3/7/12,Outliers=2,obl/obu=0/0)"
# (a "T8(f)-PDF" line counts the whole run, even where iperf labels it with the last interval:
# it is left out, so a connection's last second has no histogram of its own)
_PDF = re.compile(
    r"^\[\s*(?P<id>\d+)\]\s+(?P<a>[\d.]+)\s*-\s*(?P<b>[\d.]+)\s+sec\s+T\d+-PDF:\s+bin\(w=(?P<w>\d+)(?P<wu>us|ms)\)"
    r":cnt\(\d+\)=(?P<bins>[\d:,]*)\s+\(.*obl/obu=(?P<obl>\d+)/(?P<obu>\d+)\)"
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
    # every datagram's one-way latency: {upper edge of its bin in us: datagrams}, and how many
    # were beyond the histogram's range (None without --histograms on the server)
    owd_hist_us: dict[int, int] | None = None
    owd_beyond: int = 0


def server_cmd(proto: str, port: int) -> list[str]:
    cmd = ["stdbuf", "-oL", "iperf", "-s", "-e", "-i", "1", "-p", str(port)]
    # a large socket buffer, so a receiver that waits for a core does not drop datagrams itself
    hist = [f"--histograms={OWD_BIN_US}u,{OWD_BINS}"]
    return cmd + (["-u", "-w", "4M", *hist] if proto == "udp" else [])


def udp_counters(snmp: str) -> dict[str, int]:
    """The Udp: line pair of /proc/net/snmp as a dict (InDatagrams, RcvbufErrors, ...)."""
    rows = [ln.split()[1:] for ln in snmp.splitlines() if ln.startswith("Udp:")]
    if len(rows) < 2:
        return {}
    return {k: int(v) for k, v in zip(rows[0], rows[1], strict=False)}


def client_cmd(
    proto: str, dst_ip: str, port: int, seconds: float, udp_mbps: float, txstart: float | None = None,
    udp_len: int = UDP_LEN, report_each_second: bool = True,
) -> list[str]:
    """iperf 2's client sets its socket's send timeout to half its report interval and quits on a
    write that blocks longer; where a TCP write can wait seconds (a 50-packet queue at 500 kb/s), ask
    for no per-second report, and the timeout is half the run."""
    cmd = ["stdbuf", "-oL", "iperf", "-c", dst_ip, "-p", str(port), "-e", "--trip-times"]
    cmd += ["-i", "1"] if report_each_second else []
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
            h = _PDF.match(line.strip())
            if h and out and h["id"] == first and float(h["a"]) == out[-1].start_s and float(h["b"]) == out[-1].end_s:
                _add_histogram(out[-1], h)
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


def _add_histogram(iv: Interval, h: re.Match[str]) -> None:
    width_us = int(h["w"]) * (1000 if h["wu"] == "ms" else 1)
    bins: dict[int, int] = {}
    for item in filter(None, h["bins"].split(",")):
        k, n = item.split(":")
        bins[int(k) * width_us] = bins.get(int(k) * width_us, 0) + int(n)
    iv.owd_hist_us, iv.owd_beyond = bins, int(h["obu"])


def parse_client_retries(text: str) -> list[tuple[float, int]]:
    """(interval end in s since the connection started, TCP retransmissions) per one-second line of
    an iperf 2 TCP client's enhanced report; the whole-run summary line is left out."""
    out = []
    for line in text.splitlines():
        m = _CLIENT_TCP.match(line.strip())
        if m and 0 < float(m["b"]) - float(m["a"]) <= 1.5:
            out.append((float(m["b"]), int(m["rtry"])))
    return out
