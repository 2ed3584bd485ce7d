"""A port whose interface (or veth peer) the kernel rate-limits, as Mininet's `bw` does with tc
htb or tbf, runs at that rate unless --port-rate says otherwise, and the switch says so at start.
Namespaces and links are made here and removed after."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator

import pytest
from netns import LANES, is_root, sh

pytestmark = [pytest.mark.root, pytest.mark.skipif(not is_root(), reason="needs root for network namespaces")]


@pytest.fixture
def namespaces() -> Iterator[tuple[str, str]]:
    tag = "kr" + uuid.uuid4().hex[:6]
    ns1, ns2 = f"{tag}-a", f"{tag}-b"
    for ns in (ns1, ns2):
        sh("ip", "netns", "add", ns)
    try:
        for a, b in (("a1", "a2"), ("b1", "b2"), ("c1", "c2"), ("d1", "d2")):
            sh("ip", "-n", ns1, "link", "add", a, "type", "veth", "peer", "name", b)
        sh("ip", "-n", ns1, "link", "set", "c2", "netns", ns2)
        # Mininet's TCLink bw: root htb, default class 1 at the rate
        for ns, dev, rate in ((ns1, "a1", "100Mbit"), (ns2, "c2", "50Mbit")):
            sh("tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "handle", "5:0", "htb", "default", "1")
            sh("tc", "-n", ns, "class", "add", "dev", dev, "parent", "5:0", "classid", "5:1", "htb",
               "rate", rate, "burst", "15k")  # fmt: skip
        sh("tc", "-n", ns1, "qdisc", "add", "dev", "b2", "root", "handle", "5:", "tbf", "rate", "20Mbit",
           "burst", "15k", "latency", "10ms")  # fmt: skip
        for dev in ("lo", "a1", "b1", "c1", "d1"):
            sh("ip", "-n", ns1, "link", "set", dev, "up")
        yield ns1, ns2
    finally:
        for ns in (ns1, ns2):
            sh("ip", "netns", "del", ns, check=False)


def test_rates_from_htb_tbf_and_the_veth_peer(namespaces: tuple[str, str]) -> None:
    from lanes.switch.kernel_rates import kernel_rate

    ns1, ns2 = namespaces
    assert kernel_rate("a1", ns1) == (100e6, "a1")
    assert kernel_rate("b1", ns1) == (20e6, "its veth peer b2")
    assert kernel_rate("c1", ns1) == (50e6, f"its veth peer c2 in namespace {ns2}")
    assert kernel_rate("d1", ns1) is None


def test_the_switch_takes_them_unless_port_rate_says_otherwise(namespaces: tuple[str, str]) -> None:
    ns1, _ = namespaces
    cmd = ["ip", "netns", "exec", ns1, LANES, "switch", "--no-p4", "--no-grpc", "--thrift-port", "9090",
           "-i", "1@a1", "-i", "2@b1", "-i", "3@c1", "-i", "4@d1", "--port-rate", "3@1Gbps"]  # fmt: skip
    sw = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    try:
        assert sw.stdout is not None
        for line in sw.stdout:
            lines.append(line)
            if "ctl on" in line:
                break
        ports = subprocess.run(["ip", "netns", "exec", ns1, LANES, "ctl", "--thrift-port", "9090", "-c", "show_ports"],
                               capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    finally:
        sw.terminate()
        sw.wait(30)
    text = "".join(lines)
    assert "port 1 (a1) at 100 Mb/s, the kernel's rate limit on a1" in text, text
    assert "port 2 (b1) at 20 Mb/s, the kernel's rate limit on its veth peer b2" in text, text
    assert "port 3" not in text and "port 4" not in text, text
    assert ports.returncode == 0, ports.stderr
    rates = {
        int(w[0]): float(w[1]) for w in (x.split() for x in ports.stdout.splitlines()) if w and w[0].isdigit()
    }
    assert rates == {1: 100e6, 2: 20e6, 3: 1e9, 4: 10e9}, ports.stdout
