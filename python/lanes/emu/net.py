"""One emulated network: Mininet hosts and switches for a Topology, set up as the thesis did
(offloads off, IPv6 off, static ARP) and torn down on every exit path.

Every run leaves a state file under /run/lanes-lab naming the processes and root-namespace
interfaces it made, so `lanes lab clean` can remove exactly those if the run was killed.
Networks on one machine take turns (a lock file): their node and interface names would clash.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Self, TextIO

from mininet.link import Intf, Link, TCIntf
from mininet.log import setLogLevel
from mininet.net import Mininet
from mininet.node import Host

from lanes.emu.switch import HtbBridgeSwitch, LanesSwitch, quiet
from lanes.emu.topo import Topology
from lanes.errors import LanesError

STATE_DIR = Path("/run/lanes-lab")
OFFLOADS = ["rx", "tx", "sg", "tso", "gso", "gro", "lro", "rxvlan", "txvlan", "rxhash"]


def netns_inode(pid: int) -> int | None:
    """The inode of a process's network namespace (None: the process is gone)."""
    try:
        return os.stat(f"/proc/{pid}/ns/net").st_ino
    except OSError:
        return None


def kill_strays(shell_pids: list[int]) -> None:
    """Kill every process left in the network namespaces of these host shells but the shells
    themselves (Mininet stops those). A process entered into a host with
    mnexec -a (MPI's remote proxies) is no child of the lab and outlives an interrupted run
    otherwise."""
    spaces = {ns for ns in map(netns_inode, shell_pids) if ns is not None}
    root = netns_inode(1)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in shell_pids:
            continue
        ns = netns_inode(int(entry.name))
        if ns in spaces and ns != root:
            with contextlib.suppress(OSError):  # gone meanwhile
                os.kill(int(entry.name), signal.SIGKILL)


class LabNet:
    """`with LabNet(...) as net:` builds and starts the network; leaving the block stops it."""

    def __init__(
        self,
        topo: Topology,
        *,
        backend: str,
        out_dir: Path,
        program: Path | None = None,
        scheduler: str = "fifo",
        queue_depth: int = 64,
        host_shaping: bool = True,
        grpc: bool = True,
        switch_rt: int = 0,  # SCHED_FIFO priority of the switch processes, 0: normal
        switch_args: tuple[str, ...] = (),  # more `lanes switch` options, e.g. ("--batch-us", "50")
    ) -> None:
        self.switch_rt = switch_rt
        self.switch_args = tuple(switch_args)
        self.topo = topo
        self.backend = backend
        self.out_dir = out_dir
        self.program = program
        self.scheduler = scheduler
        self.queue_depth = queue_depth
        self.host_shaping = host_shaping
        self.grpc = grpc
        self.net: Mininet | None = None
        self.tracked: list[tuple[int, str]] = []  # processes started in hosts: (pid, name)
        self.state_file = STATE_DIR / f"{os.getpid()}.json"

    def __enter__(self) -> Self:
        self._take_turn()
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _switch_params(self, name: str) -> dict[str, object]:
        ports = self.topo.port_rates(name)
        if self.backend == "linux-htb":
            fdb = {h.mac: self.topo.out_port(name, h.ip) for h in self.topo.hosts.values()}
            return {"cls": HtbBridgeSwitch, "port_mbps": ports, "fdb": fdb}
        return {
            "cls": LanesSwitch,
            "program": self.program,
            "scheduler": self.scheduler,
            "port_mbps": ports,
            "queue_depth": self.queue_depth,
            "log_dir": self.out_dir,
            "grpc": self.grpc,
            "rt_prio": self.switch_rt,
            "extra_args": self.switch_args,
        }

    def _build(self) -> None:
        setLogLevel("critical")  # tc warnings about HTB quanta are noise
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        net = Mininet(topo=None, controller=None, build=False, autoSetMacs=False, autoStaticArp=False)
        self.net = net
        for h in self.topo.hosts.values():
            net.addHost(h.name, cls=Host, ip=f"{h.ip}/8", mac=h.mac)
        for s in self.topo.switches:
            params = self._switch_params(s)
            net.addSwitch(s, **params)
        for lk in self.topo.links:
            if lk.a in self.topo.hosts:
                shaped = {"bw": lk.mbps} if self.host_shaping else {}
                net.addLink(
                    lk.a, lk.b, port1=lk.a_port, port2=lk.b_port, cls=Link,
                    cls1=TCIntf if self.host_shaping else Intf, cls2=Intf, params1=shaped,
                )  # fmt: skip
            else:
                net.addLink(lk.a, lk.b, port1=lk.a_port, port2=lk.b_port, cls=Link)
        self._write_state()
        net.build()
        self._configure_hosts()
        net.start()
        self._write_state()

    def _configure_hosts(self) -> None:
        assert self.net is not None
        hosts = list(self.topo.hosts.values())
        for h in hosts:
            node = self.net[h.name]
            intf = node.defaultIntf().name
            node.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1")
            node.cmd(f"ethtool --offload {intf} {' off '.join(OFFLOADS)} off 2>/dev/null")
            for other in hosts:
                if other is not h:
                    node.cmd(f"ip neigh replace {other.ip} lladdr {other.mac} dev {intf} nud permanent")

    def host(self, name: str) -> Host:
        assert self.net is not None
        return self.net[name]

    def switch(self, name: str) -> LanesSwitch | HtbBridgeSwitch:
        assert self.net is not None
        node = self.net[name]
        assert isinstance(node, LanesSwitch | HtbBridgeSwitch)
        return node

    def lanes_switch(self, name: str) -> LanesSwitch:
        """A lanes switch of the network; LanesError if `name` is the kernel peer."""
        node = self.switch(name)
        if not isinstance(node, LanesSwitch):
            raise LanesError(f"{name} is not a lanes switch")
        return node

    def track(self, pid: int, name: str) -> None:
        """Record a process started inside a host, for `lanes lab clean`."""
        self.tracked.append((pid, name))
        self._write_state()

    def _write_state(self) -> None:
        if self.net is None:
            return
        nodes = [*self.net.hosts, *self.net.switches]
        state = {
            "owner": os.getpid(),
            "shell_pids": [n.pid for n in nodes if getattr(n, "pid", None)],
            "switch_pids": [s.proc.pid for s in self.net.switches if getattr(s, "proc", None) is not None],
            "root_ifaces": [i.name for s in self.net.switches for p, i in s.intfs.items() if p > 0],
            "bridges": [s.bridge for s in self.net.switches if hasattr(s, "bridge")],
            "host_pids": self.tracked,
        }
        self.state_file.write_text(json.dumps(state))

    def _take_turn(self) -> None:
        """Wait until no other lab network runs on this machine (printing who holds it)."""
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        self._lock: TextIO | None = open(STATE_DIR / "network.lock", "a+")  # noqa: SIM115 - held until close()
        next_say = 0.0
        while True:
            try:
                fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= next_say:
                    self._lock.seek(0)
                    holder = self._lock.read().strip() or "?"
                    print(f"lab: another lab network is running (pid {holder}); waiting for it",
                          file=sys.stderr, flush=True)  # fmt: skip
                    next_say = time.monotonic() + 30
                time.sleep(0.5)
        self._lock.seek(0)
        self._lock.truncate()
        self._lock.write(str(os.getpid()))
        self._lock.flush()

    def close(self) -> None:
        try:
            self._close_net()
        finally:
            lock = getattr(self, "_lock", None)
            if lock is not None:
                lock.close()  # releases the flock
                self._lock = None

    def _close_net(self) -> None:
        if self.net is not None:
            ifaces = [i.name for s in self.net.switches for p, i in s.intfs.items() if p > 0]
            try:
                kill_strays([h.pid for h in self.net.hosts if getattr(h, "pid", None)])
                self.net.stop()
            finally:
                for s in self.net.switches:  # a switch Mininet could not stop
                    proc = getattr(s, "proc", None)
                    if proc is not None and proc.poll() is None:
                        proc.kill()
                        proc.wait()
                for name in ifaces:
                    if Path(f"/sys/class/net/{name}").exists():
                        quiet("ip", "link", "del", name)
            self.net = None
        self.state_file.unlink(missing_ok=True)
