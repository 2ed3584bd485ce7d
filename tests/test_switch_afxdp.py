"""The switch with AF_XDP ports (--rx-mode afxdp) between network namespaces: frames cross with
no loss and in order with tm_basic's tables applied, malformed frames are counted and dropped,
a port set to 5 Mb/s still sends at 5 Mb/s (bytes out over the receiver's time span), and
does not send faster to make up for a time the switch was stopped."""

from __future__ import annotations

import itertools
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from netns import Star, is_root, steal_ms
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


def paced_run(
    tmp_path: Path, rate_bps: float, n: int, size: int, stall: float = 0.0
) -> tuple[float, list[float], str]:
    """One burst through a port paced at rate_bps: the CPU time (ms) the hypervisor took while it
    drained, the times h3 captured its frames at, and the switch's port counters. With `stall`,
    the switch is stopped (SIGSTOP) for that many seconds 0.3 s into the burst."""
    from scapy.all import rdpcap

    with Star(4) as star:
        start(
            star,
            tmp_path,
            "rl-sp-drr",
            extra=(*AFXDP, "--port-rate", f"3@{rate_bps / 1e6:g}Mbps", "--queue-depth", "1000"),
        )
        switch = star.procs[-1]
        pcap = tmp_path / "h3.pcap"
        cap = capture(star, 3, pcap)
        # h2's class has no rate of its own: the port's rate paces it. The burst is written in
        # a few milliseconds and lasts 0.96 s at 5 Mb/s, so the queue stays busy until the last
        # frame has left (a sender slowed by a busy machine would leave gaps, not pacing, to see)
        before = steal_ms()
        blast(star, 2, [udp(2, "10.0.1.3", i, size) for i in range(n)], tmp_path)
        if stall:
            time.sleep(0.3)
            os.kill(switch.pid, signal.SIGSTOP)
            try:
                time.sleep(stall)
            finally:
                os.kill(switch.pid, signal.SIGCONT)
        deadline = time.monotonic() + 20
        while port_tx_pkts(star, 3) < n and time.monotonic() < deadline:
            time.sleep(0.2)
        stolen = steal_ms() - before
        stop_capture(star, cap)
        times = [float(p.time) for p in rdpcap(str(pcap))]
        ports = star.ctl("show_ports")
    return stolen, times, ports


def test_a_paced_port_sends_at_its_rate(tmp_path: Path) -> None:
    rate_bps = 5e6
    n, size = 600, 1000
    wire = (n - 1) * size * 8 / rate_bps  # seconds from the first frame's departure to the last's
    # A switch the hypervisor has descheduled cannot send, and the pacer does not catch up after
    # (the next test): each stall makes the burst longer by its length. As in test_switch_netns:
    # up to 4 attempts, stopping at one with under 20 ms stolen; the least-stolen one is judged
    # and its stolen time (summed over both CPUs, so at most twice what the switch's own CPU
    # lost) is allowed on the slow side only
    runs = []
    for _attempt in range(4):
        runs.append(paced_run(tmp_path, rate_bps, n, size))
        if runs[-1][0] < 20:
            break
    stolen, times, ports = min(runs, key=lambda r: r[0])
    assert len(times) == n, ports
    span = times[-1] - times[0]
    measured = (n - 1) * size * 8 / span
    why = f"{measured / 1e6:.3f} Mb/s, span {span:.4f} s for {wire:.4f} s of wire time, steal {stolen:.0f} ms"
    # never faster: the batch window (250 us) lets frames leave at most that early, 0.03 % of
    # the 0.96 s the burst lasts; 2 % either side is the rate's tolerance
    assert span > wire * 0.98, why
    assert span < wire * 1.02 + stolen / 1000, why


def test_a_paced_port_stopped_mid_burst_does_not_catch_up(tmp_path: Path) -> None:
    # The switch stopped for 100 ms with its queue full: when it runs again it goes on at the
    # port's rate, not faster to make up for the lost time, so the burst ends 100 ms later and
    # the frames after the gap leave at their wire time (a stall can only add to both)
    rate_bps, n, size, stall = 5e6, 600, 1000, 0.1
    stolen, times, ports = paced_run(tmp_path, rate_bps, n, size, stall=stall)
    assert len(times) == n, ports
    wire = size * 8 / rate_bps
    gaps = [b - a for a, b in itertools.pairwise(times)]
    at = gaps.index(max(gaps))
    why = f"gap {max(gaps) * 1000:.1f} ms after frame {at}, span {times[-1] - times[0]:.4f} s, steal {stolen:.0f} ms"
    assert max(gaps) > stall * 0.9 and 50 < at < n - 100, why
    assert times[-1] - times[0] > ((n - 1) * wire) * 0.98 + stall * 0.9, why
    after = times[at + 51] - times[at + 1]
    assert after > 50 * wire * 0.98, (f"the 50 frames after the gap took {after * 1000:.1f} ms", why)
