"""Whether a run measured what it meant to: the congested port was kept busy, the senders sent
what they were asked to, and the machine did not lose much CPU time to its hypervisor. A run that
fails a check still has its numbers; the warnings stand beside them in summary.json and reports.

- port: per phase and bottleneck port, the goodput delivered through it, as a share of what its
  link carries at line rate (frames of UDP_LEN payload + 42 B, or TCP's 1448 + 66 B), checked
  where the offered load exceeds it (the port was backlogged), for work-conserving schedulers
  only: strict priority with per-class rates leaves capacity idle by design. A flow's bottleneck
  is the port on its path that is the most used, so on a tree the virtual switch's uplink that
  several receivers share is checked, not each receiver's own port. In the MPI phase the
  ping-pong's own messages share the ports on its path and iperf does not count them: their payload
  rate over the same seconds is estimated from the ping-pong's results (lanes.lab.mpi.payload_mbps)
  and added, but those ports are not checked, since the frames' headers and the fences' messages
  are not counted and are a large share of small messages. The load phase before it checks the
  same ports under the same load.
- senders: per phase and UDP flow, the rate the client reports having sent, as a share of the rate
  it was asked for (iperf 2 reads `-b 50M` as 50 x 2^20 bit/s).
- steal: CPU time the hypervisor gave to other guests, as a share of the machine's CPU time.
- mpi: the ping-pong measured every size (a run stops it after --mpi-timeout).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from lanes.emu.topo import Topology
from lanes.lab import mpi as mpi_case
from lanes.lab import traffic
from lanes.lab.cases import Plan

PORT_MIN_SHARE = 0.95
SENDER_MIN_SHARE = 0.95
STEAL_MAX_PCT = 2.0
IPERF_MEGA = 1.048576  # iperf 2's M in -b is 2^20
TCP_PAYLOAD, TCP_FRAME = 1448, 1514


def goodput_capacity_mbps(link_mbps: float, proto: str) -> float:
    """Most goodput a link carries: the payload share of its frames at line rate."""
    if proto == "udp":
        return link_mbps * traffic.UDP_LEN / (traffic.UDP_LEN + 42)
    return link_mbps * TCP_PAYLOAD / TCP_FRAME


Hop = tuple[str, str]  # (node that sends, node that receives) over one link


class _Way(NamedTuple):
    """One direction of the MPI ping-pong, routed like a flow."""

    src: str
    dst: str
    key: str


def _paths(topo: Topology, flows: list) -> tuple[dict[str, list[Hop]], dict[Hop, float]]:
    """Each flow's egress hops from its sender to its receiver, and each hop's link rate (Mb/s)."""
    ends: dict[tuple[str, int], tuple[str, float]] = {}
    for lk in topo.links:
        ends[(lk.a, lk.a_port)] = (lk.b, lk.mbps)
        ends[(lk.b, lk.b_port)] = (lk.a, lk.mbps)
    rates: dict[Hop, float] = {}
    paths: dict[str, list[Hop]] = {}
    for f in flows:
        dst_ip = topo.hosts[f.dst].ip
        node, port = f.src, 0
        hops: list[Hop] = []
        while len(hops) < 16:
            peer, mbps = ends[(node, port)]
            rates[(node, peer)] = mbps
            hops.append((node, peer))
            if peer == f.dst or peer in topo.hosts:
                break
            node, port = peer, topo.out_port(peer, dst_ip)
        paths[f.key] = hops
    return paths, rates


def _label(topo: Topology, hop: Hop) -> str:
    return hop[1] if hop[1] in topo.hosts else f"{hop[0]}->{hop[1]}"


def _client_intervals(out: Path, src: str, dst: str) -> list[traffic.Interval]:
    """The sending side's per-second reports (iperf 2 prints them as the receiver does)."""
    log = out / f"client_{src}_{dst}.txt"
    return traffic.parse_server(log.read_text()) if log.exists() else []


def _mean_mbps(ivs: list[traffic.Interval], start_s: float, a: float, b: float) -> float | None:
    """Mean rate of the intervals that lie in [a, b] once shifted by the flow's start."""
    sel = [iv.mbps for iv in ivs if a <= start_s + iv.end_s - 1.0 and start_s + iv.end_s <= b]
    return sum(sel) / len(sel) if sel else None


def _mpi_rates(ph: dict, through: dict[Hop, list], mpi: dict | None, iterations: int,
               ways: dict[str, list[Hop]]) -> dict[Hop, float]:  # fmt: skip
    """The ping-pong's payload rate on each port it shares with iperf flows in the MPI phase, over
    the seconds those flows' numbers were taken from."""
    if not mpi or not mpi.get("latency_us") or ph["name"] != "mpi":
        return {}
    out = {}
    for hop in {h for hops in ways.values() for h in hops} & set(through):
        spans = [st["window_s"] for _, st in through[hop] if st.get("window_s")]
        a, b = (min(s[0] for s in spans), max(s[1] for s in spans)) if spans else (ph["start_s"], ph["end_s"])
        out[hop] = mpi_case.payload_mbps(mpi["latency_us"], iterations, ph["end_s"], a, b)
    return out


def check(p: object, topo: Topology, plan: Plan, flows: dict, phases: list[dict], steal_pct: float | None,
          offered_mbps: dict[str, float], mpi: dict | None = None) -> dict:  # fmt: skip
    """The `validity` section of summary.json. `flows` is summary["flows"]; `offered_mbps` the UDP
    rate each flow was asked for (by flow key); `mpi` summary["mpi"] in the MPI case."""
    out = Path(p.out)  # type: ignore[attr-defined]
    proto = p.proto  # type: ignore[attr-defined]
    warnings: list[str] = []
    ports: dict = {}
    senders: dict = {}
    starts = {fr.flow.key: fr.start_s for fr in plan.flows}
    # each sender's log read once, not once per phase
    sent_ivs = {fr.flow.key: _client_intervals(out, fr.flow.src, fr.flow.dst) for fr in plan.flows}
    m0, m1 = topo.mpi_pair
    paths, rates = _paths(topo, [fr.flow for fr in plan.flows] + [_Way(m0, m1, "mpi>"), _Way(m1, m0, "mpi<")])
    ways = {k: paths.pop(k) for k in ("mpi>", "mpi<")}
    iterations = (mpi or {}).get("iterations", mpi_case.ITERATIONS)
    for ph in phases:
        name = ph["name"]
        active = [(fr.flow, st) for fr in plan.flows if (st := flows[fr.flow.key]["phases"].get(name)) is not None]
        through: dict[Hop, list] = {}
        for f, st in active:
            for hop in paths[f.key]:
                through.setdefault(hop, []).append((f, st))
        caps = {hop: goodput_capacity_mbps(rates[hop], proto) for hop in through}
        with_mpi = _mpi_rates(ph, through, mpi, iterations, ways)
        carried = {hop: sum(st["throughput_mbps"] for _, st in items) + with_mpi.get(hop, 0.0)
                   for hop, items in through.items()}  # fmt: skip
        use = {hop: carried[hop] / caps[hop] for hop in through}
        # each flow's bottleneck: the most used port on its path (the first of equals)
        bottlenecks = {max(paths[f.key], key=lambda h: use[h]) for f, _ in active}
        for hop in sorted(bottlenecks, key=lambda h: _label(topo, h)):
            items, cap, dst = through[hop], caps[hop], _label(topo, hop)
            delivered = carried[hop]
            offered = sum(offered_mbps.get(f.key, 0.0) for f, _ in items) if proto == "udp" else None
            if offered is not None:
                offered += with_mpi.get(hop, 0.0)
            backlogged = proto == "tcp" or (offered is not None and offered >= 1.02 * cap)
            # strict priority with per-class rates idles by design; MPI's port use is only estimated
            checked = plan.family != "strict" and hop not in with_mpi
            share = delivered / cap if cap else None
            ports.setdefault(name, {})[dst] = {
                "capacity_mbps": round(cap, 2), "delivered_mbps": round(delivered, 2),
                "offered_mbps": round(offered, 2) if offered is not None else None,
                "share": round(share, 4) if share is not None else None, "backlogged": backlogged,
                "checked": checked,
            }  # fmt: skip
            if hop in with_mpi:
                ports[name][dst]["mpi_payload_mbps"] = round(with_mpi[hop], 2)
            if checked and backlogged and share is not None and share < PORT_MIN_SHARE:
                warnings.append(
                    f"{name}: the port {'to ' if hop[1] in topo.hosts else ''}{dst} delivered {delivered:.1f} of {cap:.1f} Mb/s "
                    f"({100 * share:.1f} %) while backlogged (under {100 * PORT_MIN_SHARE:.0f} %)"
                )
        if proto != "udp":
            continue
        for fr in plan.flows:
            f = fr.flow
            if name not in flows[f.key]["phases"] or f.key not in offered_mbps:
                continue
            sent = _mean_mbps(sent_ivs[f.key], starts[f.key], ph["start_s"], ph["end_s"])
            if sent is None:
                continue
            share = sent / offered_mbps[f.key]
            senders.setdefault(name, {})[f.key] = {"asked_mbps": round(offered_mbps[f.key], 2),
                                                   "sent_mbps": round(sent, 2), "share": round(share, 4)}  # fmt: skip
            if share < SENDER_MIN_SHARE:
                warnings.append(
                    f"{name}: sender {f.key} reached {sent:.1f} of {offered_mbps[f.key]:.1f} Mb/s "
                    f"({100 * share:.1f} %, under {100 * SENDER_MIN_SHARE:.0f} %)"
                )
    if mpi and not mpi.get("complete", True):
        sizes = sorted(int(k) for k in mpi.get("latency_us", {}))
        warnings.append(f"mpi: the ping-pong was stopped before its largest size (measured {len(sizes)} sizes, "
                        f"up to {sizes[-1] if sizes else 0} B)")  # fmt: skip
    if steal_pct is not None and steal_pct > STEAL_MAX_PCT:
        warnings.append(
            f"the hypervisor stole {steal_pct:.1f} % of the machine's CPU time (over {STEAL_MAX_PCT:g} %)"
        )
    return {
        "valid": not warnings,
        "warnings": warnings,
        "limits": {
            "port_min_share": PORT_MIN_SHARE,
            "sender_min_share": SENDER_MIN_SHARE,
            "steal_max_pct": STEAL_MAX_PCT,
        },
        "ports": ports,
        "senders": senders,
        "steal_pct": steal_pct,
    }
