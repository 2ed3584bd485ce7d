"""Table writes to running lanes switches, counted. Goes through P4Runtime when the switch's
server and the `p4runtime` package are there, through the switch's command port otherwise."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Protocol

from lanes.emu.topo import Route, Topology
from lanes.errors import LanesError
from lanes.lab.cases import ClassSetting
from lanes.switch.command_client import CommandClient


@dataclass
class WriteLog:
    """Every control-plane write of a run: (time, switch, what)."""

    entries: list[tuple[float, str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, t: float, switch: str, what: str) -> None:
        with self.lock:
            self.entries.append((t, switch, what))

    def count(self, since: float | None = None) -> int:
        return sum(1 for t, _, _ in self.entries if since is None or t >= since)


class CtlTables:
    """src_ip_prio and ipv4_lpm of one switch through its command port (simple_switch_CLI syntax)."""

    channel = "ctl"

    def __init__(self, name: str, thrift_port: int) -> None:
        self.name = name
        self.ctl = CommandClient(thrift_port)
        self.handles: dict[str, int] = {}  # src_ip_prio prefix -> entry handle

    def _run(self, line: str) -> str:
        try:
            return self.ctl.run(line)
        except ValueError as e:
            raise LanesError(f"{self.name}: {line}: {e}") from None

    def _create(self, line: str) -> int:
        try:
            return self.ctl.create(line)
        except ValueError as e:
            raise LanesError(f"{self.name}: {line}: {e}") from None

    def add_route(self, r: Route) -> None:
        self._run(f"table_add ipv4_lpm ipv4_forward {r.prefix} => {r.mac} {r.port}")

    def add_class(self, prefix: str, prio: int, rate: int, quantum: int, burst: int = 0) -> None:
        action, params = class_action(prio, rate, quantum, burst)
        line = f"table_add src_ip_prio {action} {prefix} => {' '.join(map(str, params))}"
        self.handles[prefix] = self._create(line)

    def modify_class(self, prefix: str, prio: int, rate: int, quantum: int, burst: int = 0) -> None:
        h = self.handles[prefix]
        action, params = class_action(prio, rate, quantum, burst)
        self._run(f"table_modify src_ip_prio {action} {h} => {' '.join(map(str, params))}")

    def close(self) -> None:
        self.ctl.close()


def class_action(prio: int, rate: int, quantum: int, burst: int) -> tuple[str, list[int]]:
    """tm_basic's class action and its parameters (set_priority_burst when a bucket size is given),
    for either control channel."""
    if burst > 0:
        return "set_priority_burst", [prio, rate, quantum, burst]
    return "set_priority", [prio, rate, quantum]


def p4runtime_available() -> bool:
    try:
        import grpc  # noqa: F401

        from lanes.p4runtime import server  # noqa: F401
        from lanes.p4runtime.proto import p4r

        p4r.WriteRequest  # noqa: B018 - the protos load
    except Exception:  # noqa: BLE001 - missing or broken protobuf stack: fall back to the command port
        return False
    return True


class ClassTables(Protocol):
    """What populate writes through: CtlTables, or lab.p4rt's and nas's P4Runtime tables."""

    def add_route(self, r: Route) -> None: ...

    def add_class(self, prefix: str, prio: int, rate: int, quantum: int, burst: int = 0) -> None: ...


def populate(tables: ClassTables, topo: Topology, switch: str, settings: dict[str, ClassSetting], log: WriteLog, t: float,
             burst: int = 0) -> None:  # fmt: skip
    """The thesis's runtime.json: routes and class entries of one switch (set-up writes); `burst`
    (bytes, 0: the switch's default) sizes the rate-limited classes' token buckets."""
    for r in topo.routes[switch]:
        tables.add_route(r)
        log.add(t, switch, f"ipv4_lpm {r.prefix}")
    for prefix, s in settings.items():
        tables.add_class(prefix, s.prio, s.rate_Bps, s.quantum, burst)
        log.add(t, switch, f"src_ip_prio {prefix} {s.prio} {s.rate_Bps}")
