"""The linux-htb peer's traffic classes: tc HTB on the kernel bridge ports, configured as the
closest kernel equivalent of RL-SP-DRR. The high class (P4 queue 7) gets prio 0 with
rate = ceil and the token bucket lanes gives it (burst = cburst); the other classes prio 1 with a small guaranteed rate, the link as ceil and the DRR
quantum, so they share what the high class leaves by quantum. Every bridge port is limited to its link rate (the lanes switch paces at it)."""

from __future__ import annotations

import subprocess

from lanes.emu.topo import Topology
from lanes.errors import LanesError
from lanes.lab.cases import ClassSetting

CLASS_IDS = {"high": 10, "medium": 20, "low": 30, "other": 40}


def tc(*args: str) -> None:
    r = subprocess.run(["tc", *args], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise LanesError(f"tc {' '.join(args)}: {r.stderr.strip()}")


def congested_ports(topo: Topology, switch: str) -> set[int]:
    """Ports of a virtual switch that its hosts' flows leave through."""
    local = {h.name for h in topo.hosts.values() if h.switch == switch}
    return {topo.out_port(switch, topo.hosts[f.dst].ip) for f in topo.flows if f.src in local}


def bucket_bytes(rate_bytes_per_s: float, burst: int | None) -> int:
    """The token bucket lanes gives a rate-limited class: the given size, or the traffic manager's
    default for the rate. The peer gets the same, so both shape alike (HTB's own default is about
    one frame on a kernel with high-resolution timers)."""
    from lanes import _native

    return burst if burst else int(_native.default_burst_bytes(float(rate_bytes_per_s)))


def _class_args(s: ClassSetting, link_mbps: float, queue_depth: int, burst: int | None = None) -> list[str]:
    link_bit = int(link_mbps * 1e6)
    rate_bit = int(s.rate_Bps * 8)
    if s.prio == 7:  # the strict, rate-limited class
        b = f"{bucket_bytes(s.rate_Bps, burst)}b"
        return ["rate", f"{rate_bit}bit", "ceil", f"{rate_bit}bit", "burst", b, "cburst", b, "prio", "0"]
    # DRR classes: what the strict class leaves is split by quantum, as RL-SP-DRR does. HTB hands
    # out the children's own rates even beyond the parent's, so their guarantee is only a floor
    # (1 %); otherwise 60 % + 3 x 33 % would overbook the link after a runtime change.
    floor = max(link_bit // 100, 8000)
    return ["rate", f"{floor}bit", "ceil", f"{link_bit}bit", "prio", "1", "quantum", str(s.quantum)]


def setup(topo: Topology, net: object, settings: dict[str, dict[str, ClassSetting]], queue_depth: int,
          burst: int | None = None) -> int:  # fmt: skip
    """Root HTB on every port; classes and source filters on the congested ports. Returns the
    number of tc commands that configured classes (the peer's control-plane writes)."""
    writes = 0
    for s in topo.switches:
        node = net.switch(s)  # type: ignore[attr-defined]
        rates = topo.port_rates(s)
        hot = congested_ports(topo, s)
        for port, mbps in rates.items():
            dev = node.intfs[port].name
            link_bit = f"{int(mbps * 1e6)}bit"
            default = CLASS_IDS["other"] if port in hot else 1
            tc("qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "default", str(default))
            tc("class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb", "rate", link_bit,
               "ceil", link_bit)  # fmt: skip
            if port not in hot:
                tc("qdisc", "add", "dev", dev, "parent", "1:1", "pfifo", "limit", str(queue_depth))
                continue
            for e in topo.classes[s]:
                cid = CLASS_IDS[e.cls]
                st = settings[s][e.prefix]
                if e.cls == "other":
                    st = ClassSetting(1, int(mbps * 1e6 / 8 * 0.01), st.quantum)
                tc("class", "add", "dev", dev, "parent", "1:1", "classid", f"1:{cid}", "htb",
                   *_class_args(st, mbps, queue_depth, burst))  # fmt: skip
                tc("qdisc", "add", "dev", dev, "parent", f"1:{cid}", "pfifo", "limit", str(queue_depth))
                if e.cls != "other":
                    tc("filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1", "u32",
                       "match", "ip", "src", e.prefix, "flowid", f"1:{cid}")  # fmt: skip
                writes += 1
    return writes


def change(
    topo: Topology, net: object, switch: str, cls: str, s: ClassSetting, burst: int | None = None
) -> int:
    """One class change on every congested port of a switch; returns the tc commands run."""
    node = net.switch(switch)  # type: ignore[attr-defined]
    n = 0
    for port in sorted(congested_ports(topo, switch)):
        mbps = topo.port_rates(switch)[port]
        tc("class", "change", "dev", node.intfs[port].name, "parent", "1:1", "classid",
           f"1:{CLASS_IDS[cls]}", "htb", *_class_args(s, mbps, 0, burst))  # fmt: skip
        n += 1
    return n
