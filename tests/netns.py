"""Test hosts in network namespaces this test creates: a star of hosts around one switch
namespace, veth links, static ARP, offloads off. Everything is removed on exit, also on failure;
every process started here is stopped by PID."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import uuid
from pathlib import Path
from typing import Self

REPO = Path(__file__).resolve().parents[1]
LANES = str(REPO / ".venv" / "bin" / "lanes")


def sh(*cmd: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=timeout)


class Star:
    """Hosts h1..hN (10.0.1.i, MAC 00:00:00:00:01:0i) each linked to switch port i."""

    def __init__(self, hosts: int) -> None:
        self.tag = "lt" + uuid.uuid4().hex[:6]
        self.sw = f"{self.tag}-sw"
        self.hosts = [f"{self.tag}-h{i}" for i in range(1, hosts + 1)]
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

    def ip(self, i: int) -> str:
        return f"10.0.1.{i}"

    def mac(self, i: int) -> str:
        return f"00:00:00:00:01:{i:02x}"

    def _build(self) -> None:
        sh("ip", "netns", "add", self.sw)
        self.ns(self.sw, "ip", "link", "set", "lo", "up")
        for i, h in enumerate(self.hosts, 1):
            sh("ip", "netns", "add", h)
            sh(
                "ip",
                "link",
                "add",
                f"s1-eth{i}",
                "netns",
                self.sw,
                "type",
                "veth",
                "peer",
                "name",
                "eth0",
                "netns",
                h,
            )
            self.ns(h, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
            self.ns(h, "ip", "link", "set", "eth0", "address", self.mac(i))
            self.ns(h, "ip", "addr", "add", f"{self.ip(i)}/24", "dev", "eth0")
            self.ns(h, "ip", "link", "set", "eth0", "up")
            self.ns(h, "ip", "link", "set", "lo", "up")
            self.ns(
                h,
                "ethtool",
                "-K",
                "eth0",
                "tx",
                "off",
                "rx",
                "off",
                "tso",
                "off",
                "gso",
                "off",
                "gro",
                "off",
                check=False,
            )
            self.ns(self.sw, "ip", "link", "set", f"s1-eth{i}", "up")
            self.ns(
                self.sw,
                "ethtool",
                "-K",
                f"s1-eth{i}",
                "tx",
                "off",
                "rx",
                "off",
                "tso",
                "off",
                "gso",
                "off",
                "gro",
                "off",
                check=False,
            )
        self.ns(self.sw, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
        for i, h in enumerate(self.hosts, 1):
            for j in range(1, len(self.hosts) + 1):
                if j != i:
                    self.ns(
                        h,
                        "ip",
                        "neigh",
                        "add",
                        self.ip(j),
                        "lladdr",
                        self.mac(j),
                        "dev",
                        "eth0",
                        "nud",
                        "permanent",
                    )

    def ns(
        self, name: str, *cmd: str, check: bool = True, timeout: float = 60
    ) -> subprocess.CompletedProcess:
        return sh("ip", "netns", "exec", name, *cmd, check=check, timeout=timeout)

    def host(self, i: int, *cmd: str, **kw) -> subprocess.CompletedProcess:
        return self.ns(self.hosts[i - 1], *cmd, **kw)

    def start(self, name: str, *cmd: str, log: Path | None = None) -> subprocess.Popen:
        out = open(log, "w") if log else subprocess.DEVNULL  # noqa: SIM115 - closed with the process
        p = subprocess.Popen(["ip", "netns", "exec", name, *cmd], stdout=out, stderr=subprocess.STDOUT)
        self.procs.append(p)
        return p

    def start_switch(
        self, *args: str, log: Path | None = None, thrift_port: int = 9090, chrt: tuple[str, ...] = ("-f", "20")
    ) -> subprocess.Popen:
        ports = [a for i in range(1, len(self.hosts) + 1) for a in ("-i", f"{i}@s1-eth{i}")]
        # SCHED_FIFO, as the lab runs switches: the tests check the scheduler's shares and delays,
        # which a switch thread descheduled by a busy machine's other work would blur.
        p = self.start(
            self.sw,
            "chrt",
            *chrt,
            LANES,
            "switch",
            *ports,
            "--thrift-port",
            str(thrift_port),
            "--no-grpc",
            *args,
            log=log,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            r = self.ns(
                self.sw, LANES, "ctl", "--thrift-port", str(thrift_port), "-c", "show_ports", check=False
            )
            if r.returncode == 0:
                return p
            if p.poll() is not None:
                raise RuntimeError(f"switch exited with {p.returncode}: {log.read_text() if log else ''}")
            time.sleep(0.2)
        raise RuntimeError("switch did not come up within 30 s")

    def ctl(self, *commands: str, thrift_port: int = 9090) -> str:
        args = [a for c in commands for a in ("-c", c)]
        return self.ns(self.sw, LANES, "ctl", "--thrift-port", str(thrift_port), *args).stdout

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
        for name in [*self.hosts, self.sw]:
            sh("ip", "netns", "del", name, check=False)


def ping_rtts(star: Star, src: int, dst: int, count: int, interval: float = 0.01) -> list[float]:
    """RTTs in ms of `count` pings from host `src` to host `dst` (lost ones left out)."""
    out = star.host(
        src,
        "ping",
        *("-n", "-c", str(count), "-i", str(interval), "-W", "1", star.ip(dst)),
        check=False,
        timeout=count * interval + 20,
    ).stdout
    return [float(x) for x in re.findall(r"time=([\d.]+) ms", out)]


class UdpFlows:
    """iperf3 UDP flows of 1400-byte datagrams from each sender host to the last host at the given
    Mb/s for `seconds`, one server per sender (port 5200 + sender); `received()` waits for them
    and gives the receiver's view per sender: Mb/s of payload and loss %."""

    def __init__(self, star: Star, log_dir: Path, senders: dict[int, float], seconds: float) -> None:
        dst = len(star.hosts)
        self.servers = {}
        for h in senders:
            log = log_dir / f"iperf_s{h}.json"
            cmd = ("iperf3", "-s", "-1", "-J", "-p", str(5200 + h))
            self.servers[h] = (star.start(star.hosts[dst - 1], *cmd, log=log), log)
        time.sleep(0.5)
        self.clients = [
            star.start(
                star.hosts[h - 1],
                "iperf3",
                *("-u", "-c", star.ip(dst), "-p", str(5200 + h), "-b", f"{mbps}M", "-l", "1400"),
                *("-t", str(seconds), "-J"),
                log=log_dir / f"iperf_c{h}.json",
            )
            for h, mbps in senders.items()
        ]
        self.seconds = seconds

    def received(self) -> dict[int, dict]:
        for c in self.clients:
            c.wait(timeout=self.seconds + 30)
        result = {}
        for h, (p, log) in self.servers.items():
            p.wait(timeout=30)
            end = json.loads(log.read_text())["end"]["sum_received"]
            result[h] = {"mbps": end["bits_per_second"] / 1e6, "lost_pct": end["lost_percent"]}
        return result


def steal_ms() -> float:
    """CPU time the hypervisor took from this VM so far, summed over CPUs (/proc/stat "steal").
    A user-space switch that is not running cannot send: a rate measured while the VM was
    descheduled measures the host, not the switch."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return int(fields[8]) * 1000 / os.sysconf("SC_CLK_TCK")


def is_root() -> bool:
    return os.geteuid() == 0
