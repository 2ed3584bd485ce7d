"""The switch sending through AF_PACKET transmit rings (--rx-mode txring) between network
namespaces: frames cross with no loss and in order with tm_basic's tables applied, also when
more frames pass than the ring has slots (each slot is reused once the kernel has sent its
frame), and the port's counters say what left."""

from __future__ import annotations

from pathlib import Path

import pytest
from netns import Star, is_root
from test_switch_afxdp import capture, stop_capture, udp
from test_switch_netns import start
from test_switch_packets import send_frames

pytestmark = [pytest.mark.root, pytest.mark.skipif(not is_root(), reason="needs root for network namespaces")]

pytest.importorskip("scapy.all", reason="python3-scapy is installed by make setup")

TXRING = ("--rx-mode", "txring")
RING_SLOTS = 512


def test_frames_cross_in_order_through_the_transmit_ring_and_its_slots_are_reused(tmp_path: Path) -> None:
    from scapy.all import IP, UDP, rdpcap

    n = RING_SLOTS + 100  # past the ring's end: slots are used again
    with Star(4) as star:
        start(star, tmp_path, "rl-sp-drr", extra=TXRING)
        pcap = tmp_path / "h3.pcap"
        cap = capture(star, 3, pcap)
        noroute = [udp(1, "10.0.1.9", 100_000 + i) for i in range(20)]
        frames = [udp(1, "10.0.1.3", i) for i in range(n)] + noroute
        for i in range(0, len(frames), 200):  # a command line holds about 200 of them
            send_frames(star, 1, frames[i : i + 200])
        send_frames(star, 2, [udp(2, "10.0.1.3", i) for i in range(50)])
        stop_capture(star, cap, pcap, expect=n + 50)
        got = rdpcap(str(pcap))
        ports = star.ctl("show_ports")
    seqs: dict[str, list[int]] = {}
    for p in got:
        assert p.dst == "00:00:00:00:01:03", "ipv4_forward sets the destination MAC"
        assert p[IP].dst == "10.0.1.3"
        seqs.setdefault(p[IP].src, []).append(int.from_bytes(bytes(p[UDP].payload)[:4], "big"))
    assert seqs == {"10.0.1.1": list(range(n)), "10.0.1.2": list(range(50))}
    # port rate_bps scheduler rx_pkts rx_bytes tx_pkts tx_bytes tx_errors
    port3 = next(line.split() for line in ports.splitlines() if line.startswith("3 "))
    assert (int(port3[5]), int(port3[7])) == (n + 50, 0), f"port 3 counted every frame it sent: {ports}"
