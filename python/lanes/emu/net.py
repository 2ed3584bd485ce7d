"""One emulated network: Mininet hosts and switches for a Topology, set up as the thesis did
(offloads off, IPv6 off, static ARP) and torn down on every exit path.

Every run leaves a state file under /run/lanes-lab naming the processes and root-namespace
interfaces it made, so `lanes lab clean` can remove exactly those if the run was killed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Self

from mininet.link import Intf, Link, TCIntf
from mininet.log import setLogLevel
from mininet.net import Mininet
from mininet.node import Host

from lanes.emu.switch import HtbBridgeSwitch, LanesSwitch, quiet
from lanes.emu.topo import Topology

STATE_DIR = Path("/run/lanes-lab")
OFFLOADS = ["rx", "tx", "sg", "tso", "gso", "gro", "lro", "rxvlan", "txvlan", "rxhash"]


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
    ) -> None:
        self.switch_rt = switch_rt
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
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _switch_params(self, name: str) -> dict:
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

    def switch(self, name: str):  # LanesSwitch | HtbBridgeSwitch
        assert self.net is not None
        return self.net[name]

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

    def close(self) -> None:
        if self.net is not None:
            ifaces = [i.name for s in self.net.switches for p, i in s.intfs.items() if p > 0]
            try:
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
