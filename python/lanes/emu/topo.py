"""The thesis's emulated topologies (section 6.4, appendix 2) as plain data.

Addressing: host H of switch S is 10.0.S.H with MAC 00:00:00:00:0S:0H (hex). Every switch has
an `ipv4_lpm` table (prefix -> port, next-hop MAC) and an `src_ip_prio` table (source prefix ->
traffic class). Classes are resolved to (priority, rate, quantum) per case and algorithm by
lanes.lab.cases; here only the class and the link rate the class shares are recorded.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass, field

from lanes.errors import LanesError

CLASSES = ["high", "medium", "low"]


@dataclass(frozen=True)
class Host:
    name: str  # h1..hN
    switch: str  # s1..
    port: int  # switch port it hangs on
    ip: str
    mac: str


@dataclass(frozen=True)
class LinkSpec:
    a: str  # node name (host or switch)
    a_port: int  # 0 for hosts (eth0), switch port otherwise
    b: str
    b_port: int
    mbps: float


@dataclass(frozen=True)
class Route:
    prefix: str  # "10.0.1.1/32"
    port: int
    mac: str


@dataclass(frozen=True)
class ClassEntry:
    prefix: str
    cls: str  # high | medium | low | other
    share_mbps: float  # rate of the link this class competes for (the entry's 100 %)


@dataclass(frozen=True)
class Flow:
    src: str
    dst: str
    cls: str

    @property
    def key(self) -> str:
        return f"{self.src}->{self.dst}"


@dataclass
class Topology:
    name: str
    link_mbps: float
    hosts: dict[str, Host] = field(default_factory=dict)
    switches: list[str] = field(default_factory=list)
    links: list[LinkSpec] = field(default_factory=list)
    routes: dict[str, list[Route]] = field(default_factory=dict)
    classes: dict[str, list[ClassEntry]] = field(default_factory=dict)
    flows: list[Flow] = field(default_factory=list)
    mpi_pair: tuple[str, str] = ("h1", "h4")

    def port_rates(self, switch: str) -> dict[int, float]:
        """Mb/s of each port of a switch, from its links."""
        out: dict[int, float] = {}
        for lk in self.links:
            if lk.a == switch:
                out[lk.a_port] = lk.mbps
            if lk.b == switch:
                out[lk.b_port] = lk.mbps
        return out

    def vswitches(self) -> list[str]:
        """Switches with a host class (high/medium/low) in their priority table: the thesis's
        virtual access switches, where scheduling and the control-plane writes happen."""
        return [s for s in self.switches if any(e.cls in CLASSES for e in self.classes[s])]

    def out_port(self, switch: str, ip: str) -> int:
        """The port `switch` forwards `ip` to (longest prefix match over its routes)."""
        addr = ipaddress.ip_address(ip)
        best: tuple[int, int] | None = None
        for r in self.routes[switch]:
            net = ipaddress.ip_network(r.prefix)
            if addr in net and (best is None or net.prefixlen > best[0]):
                best = (net.prefixlen, r.port)
        if best is None:
            raise LanesError(f"{switch} has no route to {ip}")
        return best[1]

    def host_by_ip(self, ip: str) -> Host:
        for h in self.hosts.values():
            if h.ip == ip:
                return h
        raise LanesError(f"no host with address {ip}")

    def class_of(self, host: str) -> str:
        for f in self.flows:
            if f.src == host:
                return f.cls
        return "other"


def switch_mac(s: int, h: int) -> str:
    """MAC of host h on switch s (h = 0: the switch side, a next hop)."""
    return f"00:00:00:00:{s:02x}:{h:02x}"


def _add_host(t: Topology, h: int, s: int, port: int) -> Host:
    host = Host(f"h{h}", f"s{s}", port, f"10.0.{s}.{h}", switch_mac(s, h))
    t.hosts[host.name] = host
    t.links.append(LinkSpec(host.name, 0, host.switch, port, t.link_mbps))
    return host


def _host_routes(hosts: list[Host]) -> list[Route]:
    return [Route(f"{h.ip}/32", h.port, h.mac) for h in hosts]


def _host_classes(hosts: list[Host], mbps: float, other_mbps: float) -> list[ClassEntry]:
    entries = [ClassEntry(f"{h.ip}/32", c, mbps) for h, c in zip(hosts, CLASSES, strict=False)]
    return [*entries, ClassEntry("10.0.0.0/8", "other", other_mbps)]


def star(link_mbps: float) -> Topology:
    """TOPO-1: h1..h4 on s1; h1 (high), h2 (medium), h3 (low) send to h4 (tables 2.1, 2.2)."""
    t = Topology("star", link_mbps, switches=["s1"])
    hs = [_add_host(t, h, 1, h) for h in range(1, 5)]
    t.routes["s1"] = _host_routes(hs)
    # the thesis lists h4 itself as (3, 100 %); a /8 default covers it and anything else
    t.classes["s1"] = _host_classes(hs[:3], link_mbps, link_mbps)
    t.flows = [Flow(f"h{i}", "h4", c) for i, c in zip((1, 2, 3), CLASSES, strict=True)]
    t.mpi_pair = ("h1", "h4")
    return t


def tree1(link_mbps: float) -> Topology:
    """TOPO-2: s1 (h1-h3) and s2 (h4-h6) under ToR s3; h1->h4, h2->h5, h3->h6 (tables 2.3, 2.4)."""
    t = Topology("tree1", link_mbps, switches=["s1", "s2", "s3"])
    left = [_add_host(t, h, 1, h) for h in (1, 2, 3)]
    right = [_add_host(t, h, 2, h - 3) for h in (4, 5, 6)]
    t.links += [LinkSpec("s1", 4, "s3", 1, link_mbps), LinkSpec("s2", 4, "s3", 2, link_mbps)]
    t.routes["s1"] = [*_host_routes(left), Route("10.0.2.0/24", 4, switch_mac(2, 0))]
    t.routes["s2"] = [Route("10.0.1.0/24", 4, switch_mac(1, 0)), *_host_routes(right)]
    t.routes["s3"] = [Route("10.0.1.0/24", 1, switch_mac(1, 0)), Route("10.0.2.0/24", 2, switch_mac(2, 0))]
    t.classes["s1"] = _host_classes(left, link_mbps, link_mbps)
    t.classes["s2"] = _host_classes(right, link_mbps, link_mbps)
    t.classes["s3"] = [ClassEntry("10.0.0.0/8", "other", link_mbps)]
    t.flows = [Flow(a.name, b.name, c) for a, b, c in zip(left, right, CLASSES, strict=True)]
    t.mpi_pair = ("h1", "h4")
    return t


def tree2(link_mbps: float) -> Topology:
    """TOPO-3: vSwitches s1-s4 (3 hosts each), ToRs s5 (s1, s2) and s6 (s3, s4), aggregation s7;
    ToR-aggregation links at twice the rate. h1..h6 send to h7..h12 (tables 2.5-2.7)."""
    t = Topology("tree2", link_mbps, switches=[f"s{i}" for i in range(1, 8)])
    groups = [[_add_host(t, 3 * (s - 1) + i, s, i) for i in (1, 2, 3)] for s in (1, 2, 3, 4)]
    up = 2 * link_mbps
    t.links += [
        LinkSpec("s1", 4, "s5", 1, link_mbps),
        LinkSpec("s2", 4, "s5", 2, link_mbps),
        LinkSpec("s3", 4, "s6", 1, link_mbps),
        LinkSpec("s4", 4, "s6", 2, link_mbps),
        LinkSpec("s5", 3, "s7", 1, up),
        LinkSpec("s6", 3, "s7", 2, up),
    ]
    for s, hs in enumerate(groups, 1):
        t.routes[f"s{s}"] = [Route("10.0.0.0/16", 4, switch_mac(s, 0)), *_host_routes(hs)]
        t.classes[f"s{s}"] = _host_classes(hs, link_mbps, link_mbps)
    t.routes["s5"] = [
        Route("10.0.1.0/24", 1, switch_mac(1, 0)),
        Route("10.0.2.0/24", 2, switch_mac(2, 0)),
        Route("10.0.0.0/16", 3, switch_mac(3, 0)),
    ]
    t.routes["s6"] = [
        Route("10.0.3.0/24", 1, switch_mac(3, 0)),
        Route("10.0.4.0/24", 2, switch_mac(4, 0)),
        Route("10.0.0.0/16", 3, switch_mac(3, 0)),
    ]
    t.routes["s7"] = [
        Route("10.0.1.0/24", 1, switch_mac(1, 0)),
        Route("10.0.2.0/24", 1, switch_mac(2, 0)),
        Route("10.0.3.0/24", 2, switch_mac(3, 0)),
        Route("10.0.4.0/24", 2, switch_mac(4, 0)),
    ]
    for name in ("s5", "s6", "s7"):
        t.classes[name] = [ClassEntry("10.0.0.0/8", "other", up)]
    senders = groups[0] + groups[1]
    receivers = groups[2] + groups[3]
    t.flows = [
        Flow(a.name, b.name, CLASSES[i % 3]) for i, (a, b) in enumerate(zip(senders, receivers, strict=True))
    ]
    t.mpi_pair = ("h1", "h7")
    return t


def classify_everywhere(t: Topology) -> Topology:
    """`t` with every switch classifying traffic by sender, not only the access switches (the
    thesis's set-up): each switch without a host class gets the access switches' host entries,
    at the rate of its fastest link, so a ToR's uplink serves the high class first as well."""
    access = t.vswitches()
    hosts = [e for s in access for e in t.classes[s] if e.cls in CLASSES]
    for s in t.switches:
        if s not in access:
            mbps = max(t.port_rates(s).values())
            t.classes[s] = [ClassEntry(e.prefix, e.cls, mbps) for e in hosts]
            t.classes[s].append(ClassEntry("10.0.0.0/8", "other", mbps))
    return t


CLASSES_AT = ["access", "all"]  # which switches classify: the thesis's access switches, or all


# The thesis's topologies by name; lanes.nas.topo adds its own to these for the nas case.
MAKERS: dict[str, Callable[[float], Topology]] = {"star": star, "tree1": tree1, "tree2": tree2}
TOPOLOGIES = list(MAKERS)


def build(name: str, link_mbps: float, makers: dict[str, Callable[[float], Topology]] = MAKERS) -> Topology:
    """The topology `name` at `link_mbps`, made by one of `makers`."""
    if not link_mbps > 0:
        raise LanesError(f"link rate must be positive, got {link_mbps}")
    if name not in makers:
        raise LanesError(f"unknown topology '{name}' (expected one of {', '.join(makers)})")
    return makers[name](link_mbps)
