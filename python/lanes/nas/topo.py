"""Topologies of network-aware scheduling: a flow that crosses two bottlenecks (the victim), one
competitor on the first (up) and one on the second (down). Every host sends at its own link's
rate, so the host links set the offered load, as in the original experiment.

`link_mbps` (L) scales each topology:
  nas3     h1 -> h4 (victim) over s1-s2 (L/2) and s2-s4 (0.6 L); h2 -> h3 (up) over s1-s2 only;
           h5 -> h6 (down) over s2-s4 only. At L = 100: 50 and 60 Mb/s, the 500:600 of the
           original at a hundred times the rate, so a 64-packet queue holds 15 ms, not 1.5 s.
  nas-ch2  A-B (L) shared by the victim (h1 -> h5) and up (h2 -> h3); B-D (0.6 L) shared by the
           victim and down (h4 -> h6): 100 and 60 Mb/s at L = 100.
  nas-line h1 -> h2 alone over s1-s2 and s2-s3 (both L/2), host link L: a flow above its
           bottleneck's rate with nobody to yield to.
Addressing as the thesis topologies: host H on switch S is 10.0.S.H.
"""

from __future__ import annotations

from lanes.emu import topo as emu_topo
from lanes.emu.topo import ClassEntry, Flow, Host, LinkSpec, Route, Topology, switch_mac

ROLES = ["victim", "up", "down"]  # Flow.cls of the nas topologies


def _host(t: Topology, h: int, s: int, port: int, mbps: float) -> Host:
    host = Host(f"h{h}", f"s{s}", port, f"10.0.{s}.{h}", switch_mac(s, h))
    t.hosts[host.name] = host
    t.links.append(LinkSpec(host.name, 0, host.switch, port, mbps))
    return host


def _local(*hosts: Host) -> list[Route]:
    return [Route(f"{h.ip}/32", h.port, h.mac) for h in hosts]


def _one_class(t: Topology) -> None:
    """Every switch puts all traffic in one queue (priority 3, no rate limit below its ports)."""
    top = max(lk.mbps for lk in t.links)
    for s in t.switches:
        t.classes[s] = [ClassEntry("10.0.0.0/8", "other", top)]


def nas3(L: float) -> Topology:
    t = Topology("nas3", L, switches=["s1", "s2", "s3", "s4"])
    b1, b2 = L / 2, 0.6 * L
    h1, h2 = _host(t, 1, 1, 1, b1), _host(t, 2, 1, 2, b1)
    h5 = _host(t, 5, 2, 4, b2)
    h3 = _host(t, 3, 3, 1, L)
    h4, h6 = _host(t, 4, 4, 1, L), _host(t, 6, 4, 2, L)
    t.links += [LinkSpec("s1", 3, "s2", 1, b1), LinkSpec("s2", 2, "s3", 2, L), LinkSpec("s2", 3, "s4", 3, b2)]
    t.routes["s1"] = [*_local(h1, h2), Route("10.0.0.0/8", 3, switch_mac(2, 0))]
    t.routes["s2"] = [
        Route("10.0.1.0/24", 1, switch_mac(1, 0)), Route("10.0.3.0/24", 2, switch_mac(3, 0)),
        Route("10.0.4.0/24", 3, switch_mac(4, 0)), *_local(h5),
    ]  # fmt: skip
    t.routes["s3"] = [*_local(h3), Route("10.0.0.0/8", 2, switch_mac(2, 0))]
    t.routes["s4"] = [*_local(h4, h6), Route("10.0.0.0/8", 3, switch_mac(2, 0))]
    _one_class(t)
    t.flows = [Flow("h1", "h4", "victim"), Flow("h2", "h3", "up"), Flow("h5", "h6", "down")]
    t.mpi_pair = ("h1", "h4")
    return t


def nas_ch2(L: float) -> Topology:
    t = Topology("nas-ch2", L, switches=["s1", "s2", "s3"])
    bd = 0.6 * L
    h1, h2 = _host(t, 1, 1, 1, L), _host(t, 2, 1, 2, L)
    h3, h4 = _host(t, 3, 2, 2, L), _host(t, 4, 2, 3, bd)
    h5, h6 = _host(t, 5, 3, 1, L), _host(t, 6, 3, 2, L)
    t.links += [LinkSpec("s1", 3, "s2", 1, L), LinkSpec("s2", 4, "s3", 3, bd)]
    t.routes["s1"] = [*_local(h1, h2), Route("10.0.0.0/8", 3, switch_mac(2, 0))]
    t.routes["s2"] = [Route("10.0.1.0/24", 1, switch_mac(1, 0)), *_local(h3, h4), Route("10.0.3.0/24", 4, switch_mac(3, 0))]
    t.routes["s3"] = [*_local(h5, h6), Route("10.0.0.0/8", 3, switch_mac(2, 0))]
    _one_class(t)
    t.flows = [Flow("h1", "h5", "victim"), Flow("h2", "h3", "up"), Flow("h4", "h6", "down")]
    t.mpi_pair = ("h1", "h5")
    return t


def nas_line(L: float) -> Topology:
    t = Topology("nas-line", L, switches=["s1", "s2", "s3"])
    h1, h2 = _host(t, 1, 1, 1, L), _host(t, 2, 3, 1, L)
    t.links += [LinkSpec("s1", 2, "s2", 1, L / 2), LinkSpec("s2", 2, "s3", 2, L / 2)]
    t.routes["s1"] = [*_local(h1), Route("10.0.0.0/8", 2, switch_mac(2, 0))]
    t.routes["s2"] = [Route("10.0.1.0/24", 1, switch_mac(1, 0)), Route("10.0.3.0/24", 2, switch_mac(3, 0))]
    t.routes["s3"] = [*_local(h2), Route("10.0.0.0/8", 2, switch_mac(2, 0))]
    _one_class(t)
    t.flows = [Flow("h1", "h2", "victim")]
    t.mpi_pair = ("h1", "h2")
    return t


MAKERS = {"nas3": nas3, "nas-ch2": nas_ch2, "nas-line": nas_line}
NAS_TOPOLOGIES = list(MAKERS)


def build(name: str, link_mbps: float) -> Topology:
    """A topology by name: the nas ones or the thesis's (lanes.emu.topo)."""
    return emu_topo.build(name, link_mbps, {**emu_topo.MAKERS, **MAKERS})


def path(t: Topology, f: Flow) -> list[tuple[str, int]]:
    """The (switch, output port) hops of a flow, from its source's switch to its destination's."""
    peer = {(lk.a, lk.a_port): lk.b for lk in t.links} | {(lk.b, lk.b_port): lk.a for lk in t.links}
    dst = t.hosts[f.dst]
    hops: list[tuple[str, int]] = []
    sw = t.hosts[f.src].switch
    while True:
        port = t.out_port(sw, dst.ip)
        hops.append((sw, port))
        nxt = peer[(sw, port)]
        if nxt == dst.name:
            return hops
        if nxt in t.hosts or len(hops) > len(t.switches):
            raise ValueError(f"{f.key}: no loop-free path to {dst.name} (reached {nxt})")
        sw = nxt


def host_mbps(t: Topology, host: str) -> float:
    """Rate of a host's link: what it sends at."""
    return next(lk.mbps for lk in t.links if lk.a == host)
