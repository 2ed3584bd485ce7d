"""Port counters of a simulated subnet: ibsim on the netlist, OpenSM once up (it assigns nothing new:
ibsim keeps the netlist's LIDs; OpenSM programs the tables perfquery's MADs travel by), a traffic
pattern written into the hosts' counters through ibsim's console (PerformanceSet: ibsim forwards
MADs only, so data traffic cannot move them), then every host's counters read back with perfquery
over the fabric. Returns perfquery's text, which `counters` parses like any other."""

from __future__ import annotations

import re
from pathlib import Path

from lanes.errors import LanesError
from lanes.fabric import counters
from lanes.fabric.live import LiveSubnet

_FLOW = re.compile(r"^(\S+)\s+(\S+)\s+(\d+)$")


def read_flows(text: str, source: str = "flows") -> list[tuple[str, str, int]]:
    """'SRC DST BYTES' lines ('#' starts a comment)."""
    flows = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = _FLOW.match(line)
        if not m:
            raise LanesError(f"{source}:{n}: expected 'SRC DST BYTES', got {line!r}")
        flows.append((m.group(1), m.group(2), int(m.group(3))))
    if not flows:
        raise LanesError(f"{source}: no flows in it")
    return flows


def port_totals(flows: list[tuple[str, str, int]], hosts: dict[int, str]) -> dict[str, tuple[int, int]]:
    """Host -> (bytes received, bytes sent) over the flows."""
    known = set(hosts.values())
    out: dict[str, tuple[int, int]] = {}
    for src, dst, size in flows:
        for name in (src, dst):
            if name not in known:
                raise LanesError(f"flow {src} -> {dst}: {name} is not a compute node of the netlist")
        rcv, xmt = out.get(dst, (0, 0))
        out[dst] = (rcv + size, xmt)
        rcv, xmt = out.get(src, (0, 0))
        out[src] = (rcv, xmt + size)
    return out


def set_and_read(net: str, flows: list[tuple[str, str, int]], outdir: str) -> str:
    """Starts ibsim and OpenSM (ftree, no periodic sweeps) on `net`, sets each host's data counters
    to the flows' totals and reads every host's counters back with perfquery -x."""
    with LiveSubnet(net, "ftree", outdir, sweep=0) as sub:
        hosts = counters.hosts_from_netlist(Path(sub.net).read_text())
        for name, (rcv, xmt) in sorted(port_totals(flows, hosts).items()):
            for attr in ("PortCountersExtended", "PortCounters"):
                for fld, size in (("PortRcvData", rcv), ("PortXmitData", xmt)):
                    words = size // counters.WORD_BYTES
                    sub.console(f'PerformanceSet "{name}"[1] {attr}.{fld}={words}', "has been set to")
        return counters.read_live(sub.sim_env, sub.outdir, sorted(hosts))
