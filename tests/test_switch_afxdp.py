"""The switch with AF_XDP ports (--rx-mode afxdp) between network namespaces: frames cross with
no loss and in order with tm_basic's tables applied, malformed frames are counted and dropped,
and a port set to 5 Mb/s still sends at 5 Mb/s (bytes out over the receiver's time span)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from netns import Star, is_root
from test_switch_netns import start
from test_switch_packets import L3_COMMANDS, drops, send_frames

pytestmark = [pytest.mark.root, pytest.mark.skipif(not is_root(), reason="needs root for network namespaces")]

scapy = pytest.importorskip("scapy.all", reason="python3-scapy is installed by make setup")

AFXDP = ("--rx-mode", "afxdp")


def udp(src: int, dst_ip: str, seq: int, size: int = 100, dst_mac: str = "00:00:00:00:00:99") -> bytes:
    from scapy.all import IP, UDP, Ether

    head = Ether(src=f"00:00:00:00:01:{src:02x}", dst=dst_mac) / IP(src=f"10.0.1.{src}", dst=dst_ip)
    payload = seq.to_bytes(4, "big")
    frame = bytes(head / UDP(sport=1000 + src, dport=9) / payload)
    return frame + bytes(max(0, size - len(frame)))


def blast(star: Star, host: int, frames: list[bytes], tmp: Path) -> None:
    """Write frames back to back on a host's eth0 through one AF_PACKET socket."""
    hexes = tmp / f"frames_h{host}.txt"
    hexes.write_text("\n".join(f.hex() for f in frames))
    script = (
        "import socket, sys\n"
        "s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\n"
        "s.bind(('eth0', 0))\n"
        "for h in open(sys.argv[1]).read().split():\n"
        "    s.send(bytes.fromhex(h))\n"
    )
    star.host(host, sys.executable, "-c", script, str(hexes))


def capture(star: Star, host: int, pcap: Path):
    """tcpdump on a host's eth0 (UDP to port 9 only), started and given time to listen. In
    immediate mode: otherwise libpcap hands packets over a buffer block at a time, up to a
    second late, and frames that arrived before tcpdump is stopped can be missing from the file."""
    p = star.start(
        star.hosts[host - 1], "tcpdump", "--immediate-mode", "-U", "-n", "-i", "eth0", "-w", str(pcap), "udp dst port 9"
    )
    time.sleep(1.0)
    return p


def stop_capture(star: Star, p, pcap: Path | None = None, expect: int = 0) -> None:
    """Stop tcpdump once the capture holds `expect` frames (or after 30 s, for the assertions to
    say what is missing); the switch may still be sending when the senders return."""
    from scapy.all import rdpcap
    from scapy.error import Scapy_Exception

    deadline = time.monotonic() + 30
    while pcap is not None and time.monotonic() < deadline:
        try:
            if len(rdpcap(str(pcap))) >= expect:
                break
        except (OSError, EOFError, Scapy_Exception):  # tcpdump has not written the header yet
            pass
        time.sleep(0.2)
    time.sleep(0.5)
    p.terminate()
    p.wait(timeout=10)


def test_frames_cross_in_order_with_the_table_applied(tmp_path: Path) -> None:
    from scapy.all import IP, UDP, rdpcap

    with Star(4) as star:
        start(star, tmp_path, "rl-sp-drr", extra=AFXDP)
        assert "AF_XDP" in (tmp_path / "switch.log").read_text()
        pcap = tmp_path / "h3.pcap"
        cap = capture(star, 3, pcap)
        # two flows toward h3, and frames to an address with no route (dropped by the table's
        # default action)
        noroute = [udp(1, "10.0.1.9", 1000 + i) for i in range(20)]
        send_frames(star, 1, [udp(1, "10.0.1.3", i) for i in range(150)] + noroute)
        send_frames(star, 2, [udp(2, "10.0.1.3", i) for i in range(150)])
        stop_capture(star, cap, pcap, expect=300)
        got = rdpcap(str(pcap))
    seqs: dict[str, list[int]] = {}
    for p in got:
        assert p.dst == "00:00:00:00:01:03", "ipv4_forward sets the destination MAC"
        assert p[IP].dst == "10.0.1.3"
        seqs.setdefault(p[IP].src, []).append(int.from_bytes(bytes(p[UDP].payload)[:4], "big"))
    assert seqs == {"10.0.1.1": list(range(150)), "10.0.1.2": list(range(150))}


def test_malformed_frames_are_counted_and_dropped(tmp_path: Path) -> None:
    good = udp(1, "10.0.1.2", 1)
    malformed = [
        good[:14],  # Ethernet header claiming IPv4, no IPv4 header
        good[: 14 + 11],  # IPv4 header cut in the middle
        bytes(8),  # runt: shorter than an Ethernet header
        good[:12] + b"\x08",  # ends inside the EtherType
    ]
    with Star(4) as star:
        # l3_basic's parser rejects a cut header (tm_basic's lets it through to its tables)
        start(star, tmp_path, "rl-sp-drr", program="l3_basic", commands=L3_COMMANDS, extra=AFXDP)
        before = drops(star)
        pcap = tmp_path / "h2.pcap"
        cap = capture(star, 2, pcap)
        send_frames(star, 1, malformed * 5 + [good])
        stop_capture(star, cap, pcap, expect=1)
        after = drops(star)
        from scapy.all import rdpcap

        got = rdpcap(str(pcap))
    # the kernel may pad runts to 60 bytes, which changes the reason, not the count
    assert sum(after.values()) - sum(before.values()) == 20, (before, after)
    assert len(got) == 1, "forwarding goes on after malformed frames"


def port_tx_pkts(star: Star, port: int) -> int:
    line = next(x for x in star.ctl("show_ports").splitlines() if x.startswith(f"{port} "))
    return int(line.split()[5])


def test_a_paced_port_sends_at_its_rate(tmp_path: Path) -> None:
    from scapy.all import rdpcap

    rate_bps = 5e6
    n, size = 600, 1000
    with Star(4) as star:
        start(star, tmp_path, "rl-sp-drr", extra=(*AFXDP, "--port-rate", "3@5Mbps", "--queue-depth", "1000"))
        pcap = tmp_path / "h3.pcap"
        cap = capture(star, 3, pcap)
        # h2's class has no rate of its own: the port's 5 Mb/s paces it. The burst is written in
        # a few milliseconds and lasts 0.96 s at 5 Mb/s, so the queue stays busy until the last
        # frame has left (a sender slowed by a busy machine would leave gaps, not pacing, to see)
        blast(star, 2, [udp(2, "10.0.1.3", i, size) for i in range(n)], tmp_path)
        deadline = time.monotonic() + 20
        while port_tx_pkts(star, 3) < n and time.monotonic() < deadline:
            time.sleep(0.2)
        stop_capture(star, cap)
        got = rdpcap(str(pcap))
        ports = star.ctl("show_ports")
    assert len(got) == n, ports
    # every frame after the first took its wire time at 5 Mb/s; the batch window (250 us) lets
    # frames leave at most that early, 0.03 % of the 0.96 s the burst lasts
    span = float(got[-1].time - got[0].time)
    measured = (n - 1) * size * 8 / span
    assert abs(measured - rate_bps) / rate_bps < 0.02, f"{measured / 1e6:.3f} Mb/s"
