"""A node order from port counters, the input Paper III's NoFTree takes: compute nodes ordered by the
data they received, busiest first. The counters are read as `perfquery` prints them (PortCounters,
or PortCountersExtended with -x; a file may hold several hosts' outputs one after the other) and the
LIDs are named through the netlist. Nodes below a threshold of received bytes are left out of the
order (NoFTree then places them in port order): management traffic alone (SMPs, the counter reads
themselves, 288-byte MADs) keeps every port's counters above zero.

On ibsim: ibsim carries no data traffic, but its console's PerformanceSet sets a port's counters
and every MAD it forwards moves them (72 four-byte words per MAD on each port it crosses), so a
traffic pattern is set there and read back with perfquery over the simulated fabric."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from lanes.errors import LanesError

# perfquery: '# Port counters: Lid 5 port 1 (CapMask: 0x1400)' or '# Port extended counters: ...'
_HEADER = re.compile(r"^# Port (extended )?counters: Lid (\d+) port (\d+)")
# 'PortRcvData:.....................1234'
_FIELD = re.compile(r"^(\w+):\.*\s*(\S+)\s*$")
# netlist: 'Ca	1 "h-0"	# ...' then its port lines '[1](...)	"s1-0"[1]	# lid 5 lmc 0 ...'
_CA = re.compile(r'^Ca\s+\d+\s+"([^"]+)"')
_NODE = re.compile(r"^(Switch|Ca|Hca)\s")
_CA_PORT_LID = re.compile(r"^\[\d+\].*#\s*lid (\d+) lmc")

# PortXmitData / PortRcvData count 4-byte words (IBA 16.1.3.5).
WORD_BYTES = 4


@dataclass
class PortCounters:
    lid: int
    port: int
    extended: bool
    fields: dict[str, int] = field(default_factory=dict)


def parse_perfquery(text: str, source: str = "counters") -> list[PortCounters]:
    """perfquery's output (one or more hosts, basic or extended counters) as counter blocks."""
    blocks: list[PortCounters] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        m = _HEADER.match(line)
        if m:
            blocks.append(PortCounters(int(m.group(2)), int(m.group(3)), bool(m.group(1))))
            continue
        if line.startswith("#"):
            continue
        m = _FIELD.match(line)
        if not m:
            raise LanesError(f"{source}:{n}: not a perfquery counter line: {line!r}")
        if not blocks:
            raise LanesError(
                f"{source}:{n}: counter {m.group(1)} before any '# Port counters: Lid N port P' line"
            )
        try:
            blocks[-1].fields[m.group(1)] = int(m.group(2), 0)
        except ValueError:
            raise LanesError(f"{source}:{n}: {m.group(1)}: not a number: {m.group(2)!r}") from None
    if not blocks:
        raise LanesError(f"{source}: no perfquery counters in it ('# Port counters: Lid N port P' lines)")
    return blocks


def hosts_from_netlist(text: str) -> dict[int, str]:
    """LID -> compute node name, from a netlist (lanes's or ibnetdiscover's) whose CA port lines name
    their LIDs."""
    hosts: dict[int, str] = {}
    ca: str | None = None
    for line in text.splitlines():
        m = _CA.match(line)
        if m:
            ca = m.group(1)
            continue
        if _NODE.match(line):
            ca = None
            continue
        m = _CA_PORT_LID.match(line)
        if ca is not None and m and int(m.group(1)):
            hosts[int(m.group(1))] = ca
    if not hosts:
        raise LanesError("the netlist names no compute-node LIDs ('# lid N lmc ...' on CA port lines)")
    return hosts


def received_bytes(blocks: list[PortCounters], hosts: dict[int, str]) -> dict[str, int]:
    """Bytes each compute node received (PortRcvData x 4; the extended counter where both are given)."""
    out: dict[str, int] = {}
    extended: set[str] = set()
    for b in blocks:
        name = hosts.get(b.lid)
        if name is None:
            raise LanesError(f"counters for LID {b.lid}: no compute node has that LID in the netlist")
        if "PortRcvData" not in b.fields:
            raise LanesError(f"counters for {name} (LID {b.lid}) have no PortRcvData")
        if name in extended and not b.extended:
            continue
        out[name] = b.fields["PortRcvData"] * WORD_BYTES
        if b.extended:
            extended.add(name)
    return out


def order_by_received(received: dict[str, int], hosts: dict[int, str], min_bytes: int) -> list[str]:
    """Names busiest receiver first; equal counts in LID order; nodes below `min_bytes` left out."""
    lid_of = {name: lid for lid, name in hosts.items()}
    busy = [n for n, b in received.items() if b >= min_bytes]
    return sorted(busy, key=lambda n: (-received[n], lid_of[n]))


def read_live(env: dict[str, str], cwd: Path, lids: list[int], timeout: float = 60) -> str:
    """perfquery -x for port 1 of each LID, under umad2sim (env names the ibsim socket); the outputs
    one after the other."""
    out = []
    for lid in lids:
        try:
            p = subprocess.run(
                ["perfquery", "-x", str(lid), "1"],
                env=env,
                cwd=cwd,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except FileNotFoundError:
            raise LanesError("not installed: perfquery (infiniband-diags; run make setup)") from None
        except subprocess.TimeoutExpired:
            raise LanesError(f"perfquery for LID {lid} took longer than {timeout:.0f} s") from None
        if p.returncode != 0:
            last = (p.stderr.strip().splitlines() or ["no output"])[-1]
            raise LanesError(f"perfquery for LID {lid} failed (rc {p.returncode}): {last}")
        out.append(p.stdout)
    return "".join(out)
