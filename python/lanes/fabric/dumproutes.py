"""Routes read off files, for tables lanes did not compute (OpenSM's dumps): the links of a netlist,
the LFTs of an opensm-lfts.dump by switch name, and the route from a compute node to a LID as the
switch ports it leaves by."""

from __future__ import annotations

import re
from pathlib import Path

from lanes.errors import LanesError

_NODE = re.compile(r'^(Switch|Ca|Hca)\s+\d+\s+"([^"]+)"')
_PORT = re.compile(r'^\[(\d+)\]\S*\s+"([^"]+)"\[(\d+)\]')
_DUMP_SWITCH = re.compile(r"^Unicast lids .*\('(.*)'\):")


def links(net: str) -> dict[tuple[str, int], str]:
    """(node, port) -> the node at the other end, from a netlist file."""
    out: dict[tuple[str, int], str] = {}
    node = None
    for line in Path(net).read_text().splitlines():
        m = _NODE.match(line)
        if m:
            node = m.group(2)
            continue
        m = _PORT.match(line)
        if m and node:
            out[(node, int(m.group(1)))] = m.group(2)
    if not out:
        raise LanesError(f"{net}: no links in it")
    return out


def tables(dump: str) -> dict[str, dict[int, int]]:
    """switch name -> {LID: port} from an opensm-lfts.dump file."""
    out: dict[str, dict[int, int]] = {}
    cur: dict[int, int] | None = None
    for line in Path(dump).read_text().splitlines():
        m = _DUMP_SWITCH.match(line)
        if m:
            cur = out.setdefault(m.group(1), {})
        elif line.startswith("0x") and cur is not None:
            lid, port = line.split()[:2]
            cur[int(lid, 16)] = int(port)
    if not out:
        raise LanesError(f"{dump}: no switch tables in it")
    return out


def route(
    net_links: dict[tuple[str, int], str], lfts: dict[str, dict[int, int]], src: str, lid: int
) -> list[str]:
    """The links ('switch[port]') from compute node `src` towards `lid`; a route the tables do not
    deliver ends in 'none'."""
    hops: list[str] = []
    x = net_links.get((src, 1))
    for _ in range(64):
        if x is None or x not in lfts:
            return hops
        p = lfts[x].get(lid)
        if p is None or p == 255:
            return [*hops, "none"]
        hops.append(f"{x}[{p}]")
        x = net_links.get((x, p))
    return [*hops, "none"]
