"""Hosts for the benchmarks: network namespaces h1..hN, each with eth0 (10.0.1.i, MAC
00:00:00:00:01:0i, static ARP for the others) linked by a veth to an interface in this namespace
that a `lanes switch` started here takes as port i. The switch stays in this namespace, so its
command and gRPC ports on 127.0.0.1 are the script's own. Everything is removed on exit, also
on failure: processes started here by their PID, namespaces (and with them the veths) by name.
Needs root."""

from __future__ import annotations

import os
import re
import subprocess
import uuid
from pathlib import Path
from typing import IO, Self

OFFLOADS = ("tx", "off", "rx", "off", "tso", "off", "gso", "off", "gro", "off")


def sh(*cmd: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=timeout)


class Hosts:
    def __init__(self, n: int) -> None:
        self.tag = "lb" + uuid.uuid4().hex[:6]
        self.names = [f"{self.tag}-h{i}" for i in range(1, n + 1)]
        self.ifaces = [f"{self.tag}p{i}" for i in range(1, n + 1)]  # the switch's side
        self.procs: list[subprocess.Popen] = []

    def __enter__(self) -> Self:
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def ip(i: int) -> str:
        return f"10.0.1.{i}"

    @staticmethod
    def mac(i: int) -> str:
        return f"00:00:00:00:01:{i:02x}"

    def ports(self) -> list[str]:
        """`lanes switch` port options: -i 1@IFACE1 -i 2@IFACE2 ..."""
        return [a for i, name in enumerate(self.ifaces, 1) for a in ("-i", f"{i}@{name}")]

    def _build(self) -> None:
        for i, (h, sw_if) in enumerate(zip(self.names, self.ifaces, strict=True), 1):
            sh("ip", "netns", "add", h)
            sh("ip", "link", "add", sw_if, "type", "veth", "peer", "name", "eth0", "netns", h)
            sh("sysctl", "-qw", f"net.ipv6.conf.{sw_if}.disable_ipv6=1")
            sh("ethtool", "-K", sw_if, *OFFLOADS, check=False)
            sh("ip", "link", "set", sw_if, "up")
            self.run(i, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
            self.run(i, "ip", "link", "set", "eth0", "address", self.mac(i))
            self.run(i, "ip", "addr", "add", f"{self.ip(i)}/24", "dev", "eth0")
            self.run(i, "ethtool", "-K", "eth0", *OFFLOADS, check=False)
            self.run(i, "ip", "link", "set", "eth0", "up")
            self.run(i, "ip", "link", "set", "lo", "up")
        for i in range(1, len(self.names) + 1):
            for j in range(1, len(self.names) + 1):
                if i != j:
                    self.run(i, "ip", "neigh", "add", self.ip(j), "lladdr", self.mac(j), "dev", "eth0",
                             "nud", "permanent")  # fmt: skip

    def run(self, i: int, *cmd: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        """`cmd` in host i's namespace, to its end."""
        return sh("ip", "netns", "exec", self.names[i - 1], *cmd, check=check, timeout=timeout)

    def start(self, i: int | None, *cmd: str, log: Path | None = None, out: IO | int | None = None) -> subprocess.Popen:
        """`cmd` started in host i's namespace (None: this one), stopped by `close`."""
        prefix = ("ip", "netns", "exec", self.names[i - 1]) if i is not None else ()
        if out is None:
            out = open(log, "w") if log else subprocess.DEVNULL  # noqa: SIM115 - closed with the process
        p = subprocess.Popen([*prefix, *cmd], stdout=out, stderr=subprocess.STDOUT)
        self.procs.append(p)
        return p

    def ping(self, src: int, dst: int, count: int = 3, wait_s: float = 5) -> int:
        """Echo replies host `src` got from host `dst` out of `count`."""
        r = self.run(src, "ping", "-n", "-q", "-c", str(count), "-i", "0.2", "-W", f"{wait_s:g}", self.ip(dst),
                     check=False, timeout=count * (wait_s + 1) + 10)  # fmt: skip
        m = re.search(r"(\d+) received", r.stdout)
        return int(m.group(1)) if m else 0

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs.clear()
        for h in self.names:
            sh("ip", "netns", "del", h, check=False)  # takes its veth, and so the peer, with it
        for sw_if in self.ifaces:
            if Path(f"/sys/class/net/{sw_if}").exists():
                sh("ip", "link", "del", sw_if, check=False)


def is_root() -> bool:
    return os.geteuid() == 0
