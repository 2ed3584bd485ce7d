"""The rate limit the kernel puts on an interface, read from tc: a root tbf's rate, or the rate of
a root htb's default class (what Mininet's `bw` sets), on the interface itself or else on its
veth peer (found in whichever network namespace holds it). `lanes switch` takes it as the port's
line rate where --port-rate does not give one, so a link shaped for bmv2 paces lanes alike."""

from __future__ import annotations

import json
import re
import subprocess

UNITS = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
CLASS_LINE = re.compile(r"^class htb (\S+) .*?\brate ([\d.]+)([KMGT]?)bit\b")


def _run(cmd: list[str]) -> str | None:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout if r.returncode == 0 else None


def _ns(netns: str | None) -> list[str]:
    return ["-n", netns] if netns else []


def tc_rate_bps(ifname: str, netns: str | None = None) -> float | None:
    """The rate (bits/s) of the root tbf or htb on `ifname`, None if it has neither."""
    out = _run(["tc", *_ns(netns), "-j", "qdisc", "show", "dev", ifname])
    try:
        qdiscs = json.loads(out) if out else []
    except json.JSONDecodeError:
        return None
    root = next((q for q in qdiscs if q.get("root")), None)
    if root is None:
        return None
    if root.get("kind") == "tbf":
        rate = root.get("options", {}).get("rate")  # bytes per second
        return float(rate) * 8 if rate else None
    if root.get("kind") == "htb":
        return _htb_rate_bps(ifname, netns, root)
    return None


def _htb_rate_bps(ifname: str, netns: str | None, root: dict) -> float | None:
    # this iproute2 prints htb classes as text even with -j
    out = _run(["tc", *_ns(netns), "class", "show", "dev", ifname]) or ""
    rates = {}
    for line in out.splitlines():
        m = CLASS_LINE.match(line.strip())
        if m:
            rates[m.group(1)] = float(m.group(2)) * UNITS[m.group(3)]
    if not rates:
        return None
    major = str(root.get("handle", "")).rstrip(":")
    default = int(str(root.get("options", {}).get("default", "0")), 0)
    return rates.get(f"{major}:{default:x}", min(rates.values()))


def veth_peer(ifname: str, netns: str | None = None) -> tuple[str, str | None] | None:
    """(peer interface, its namespace name or None for this one) of a veth, None otherwise."""
    out = _run(["ip", *_ns(netns), "-j", "-d", "link", "show", "dev", ifname])
    try:
        link = json.loads(out)[0] if out else {}
    except (json.JSONDecodeError, IndexError):
        return None
    if link.get("linkinfo", {}).get("info_kind") != "veth":
        return None
    if "link_netnsid" not in link:
        return (link["link"], netns) if link.get("link") else None
    ns_out = _run(["ip", *_ns(netns), "-j", "netns", "list"])
    names = [n["name"] for n in json.loads(ns_out or "[]") if n.get("id") == link["link_netnsid"]]
    for name in names:
        peers = json.loads(_run(["ip", "-n", name, "-j", "link", "show"]) or "[]")
        found = [p["ifname"] for p in peers if p.get("ifindex") == link.get("link_index")]
        if found:
            return found[0], name
    return None


def kernel_rate(ifname: str, netns: str | None = None) -> tuple[float, str] | None:
    """(rate in bits/s, where it was found) for `ifname`, from itself or its veth peer."""
    rate = tc_rate_bps(ifname, netns)
    if rate:
        return rate, ifname
    peer = veth_peer(ifname, netns)
    if peer is not None:
        rate = tc_rate_bps(*peer)
        if rate:
            return rate, f"its veth peer {peer[0]}" + (f" in namespace {peer[1]}" if peer[1] != netns else "")
    return None
