"""Mininet switch nodes: a lanes switch process, or the linux-htb peer (kernel bridge + tc HTB).

Both live in the root namespace as Mininet switches do; their interfaces carry no addresses and
IPv6 is off on them. The lanes switch paces every port at its link's rate itself, so its link
ends get no tc shaping.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

from mininet.node import Switch

from lanes.errors import LanesError


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def lanes_exe() -> str:
    return str(Path(sys.executable).with_name("lanes"))


def quiet(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


def iface_defaults(name: str) -> None:
    """IPv6 off and offloads off on a root-namespace link end."""
    quiet("sysctl", "-qw", f"net.ipv6.conf.{name}.disable_ipv6=1")
    quiet("ethtool", "-K", name, "rx", "off", "tx", "off", "sg", "off", "tso", "off", "gso", "off",
          "gro", "off", "lro", "off")  # fmt: skip


class LanesSwitch(Switch):  # type: ignore[misc]  # Mininet has no type hints
    """Starts `lanes switch` with bmv2-style arguments; the port rates come from the links."""

    def __init__(
        self,
        name: str,
        *,
        program: Path,
        scheduler: str,
        port_mbps: dict[int, float],
        queue_depth: int = 64,
        log_dir: Path,
        grpc: bool = True,
        rt_prio: int = 0,
        extra_args: tuple[str, ...] = (),
        **params: object,
    ) -> None:
        super().__init__(name, **params)
        self.rt_prio = rt_prio
        self.extra_args = tuple(extra_args)
        self.program = program
        self.scheduler = scheduler
        self.port_mbps = port_mbps
        self.queue_depth = queue_depth
        self.log_dir = log_dir
        self.grpc = grpc
        self.thrift_port = free_port()
        self.grpc_port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def process_id(self) -> int:
        """The `lanes switch` process's pid (Mininet's `pid` is the node's shell)."""
        if self.proc is None:
            raise LanesError(f"switch {self.name} is not running")
        return self.proc.pid

    @property
    def device_id(self) -> int:
        return int(self.name.lstrip("s"))

    def command_line(self) -> list[str]:
        # on a small shared machine the data plane loses line rate whenever it waits for a core:
        # a real-time class makes it the first to run, as the kernel's own forwarding (softirq) is
        cmd = ["chrt", "-f", str(self.rt_prio)] if self.rt_prio else []
        # with P4Runtime the controller pushes the program; otherwise it is loaded at start
        program = ["--no-p4"] if self.grpc else [str(self.program)]
        cmd += [lanes_exe(), "switch", *program, "--device-id", str(self.device_id)]
        for port, intf in sorted(self.intfs.items()):
            if port > 0:
                cmd += ["-i", f"{port}@{intf.name}"]
                cmd += ["--port-rate", f"{port}@{self.port_mbps[port]:g}Mbps"]
        cmd += ["--scheduler", self.scheduler, "--queue-depth", str(self.queue_depth)]
        cmd += ["--thrift-port", str(self.thrift_port), *self.extra_args]
        if self.grpc:
            cmd += ["--", "--grpc-server-addr", f"127.0.0.1:{self.grpc_port}"]
        else:
            cmd += ["--no-grpc"]
        return cmd

    def start(self, controllers: list[object]) -> None:
        for port, intf in self.intfs.items():
            if port > 0:
                iface_defaults(intf.name)
                quiet("ip", "link", "set", intf.name, "up")
        log = open(self.log_dir / f"{self.name}.log", "w")  # noqa: SIM115 - lives with the process
        self.proc = subprocess.Popen(self.command_line(), stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self._wait_ready()

    def _wait_ready(self, timeout: float = 30.0) -> None:
        ports = [self.thrift_port] + ([self.grpc_port] if self.grpc else [])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                text = (self.log_dir / f"{self.name}.log").read_text().strip().splitlines()
                raise LanesError(f"switch {self.name} exited: {text[-1] if text else self.proc.returncode}")
            if all(_listening(p) for p in ports):
                return
            time.sleep(0.1)
        raise LanesError(f"switch {self.name} did not listen on {ports} within {timeout:.0f} s")

    def stop(self, deleteIntfs: bool = True) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        super().stop(deleteIntfs)


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class HtbBridgeSwitch(Switch):  # type: ignore[misc]  # Mininet has no type hints
    """The linux-htb peer: a kernel bridge with static forwarding entries, and tc HTB on every
    port at the link rate (the line rate the lanes switch would pace at). Class set-up on the
    congested ports is done by lanes.lab.htb."""

    def __init__(self, name: str, *, port_mbps: dict[int, float], fdb: dict[str, int], **params: object):
        super().__init__(name, **params)
        self.port_mbps = port_mbps
        self.fdb = fdb  # MAC -> port
        self.bridge = f"{name}-br"

    def start(self, controllers: list[object]) -> None:
        quiet("ip", "link", "del", self.bridge)
        _must("ip", "link", "add", self.bridge, "type", "bridge", "stp_state", "0")
        # bridged IPv4 must not meet the root namespace's iptables (Docker sets FORWARD to DROP)
        quiet("ip", "link", "set", self.bridge, "type", "bridge", "nf_call_iptables", "0")
        quiet("sysctl", "-qw", f"net.ipv6.conf.{self.bridge}.disable_ipv6=1")
        for port, intf in self.intfs.items():
            if port > 0:
                iface_defaults(intf.name)
                _must("ip", "link", "set", intf.name, "master", self.bridge)
                _must("ip", "link", "set", intf.name, "up")
        _must("ip", "link", "set", self.bridge, "up")
        for mac, port in self.fdb.items():
            _must("bridge", "fdb", "replace", mac, "dev", self.intfs[port].name, "master", "static")

    def stop(self, deleteIntfs: bool = True) -> None:
        quiet("ip", "link", "del", self.bridge)
        super().stop(deleteIntfs)


def _must(*cmd: str) -> None:
    r = quiet(*cmd)
    if r.returncode != 0:
        raise LanesError(f"{' '.join(cmd)}: {r.stderr.strip() or r.returncode}")
