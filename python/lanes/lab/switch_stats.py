"""What the lab reads from a running lanes switch, typed: the answer of the command port's
`stats_json [reset]` (crates/switch/src/commands/stats.rs) as dataclasses. The `show_*` text
commands print the same numbers for people; the lab reads only this document."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from lanes.switch.command_client import CommandClient


@dataclass(frozen=True)
class QueueDelay:
    """Queueing delay of one queue since the last reset: packets, largest and total delay (ns),
    and the histogram's nonempty buckets {index: count} (bounds: lanes.lab.delay.bucket_lower)."""

    pkts: int
    max_ns: int
    sum_ns: int
    buckets: dict[int, int]


@dataclass(frozen=True)
class QueueStats:
    port: int
    qid: int
    depth_pkts: int
    depth_bytes: int
    enq_pkts: int
    deq_pkts: int
    drops: int
    delay: QueueDelay

    def depth_row(self) -> dict[str, int]:
        """The monitor's telemetry.jsonl row of this queue."""
        return {"port": self.port, "qid": self.qid, "depth_pkts": self.depth_pkts, "depth_bytes": self.depth_bytes,
                "enq_pkts": self.enq_pkts, "deq_pkts": self.deq_pkts, "drops": self.drops}  # fmt: skip

    def delay_row(self) -> dict[str, Any]:
        """The monitor's delay.jsonl row of this queue (lanes.lab.delay.per_phase reads it)."""
        d = self.delay
        return {"port": self.port, "qid": self.qid, "pkts": d.pkts, "max_ns": d.max_ns, "sum_ns": d.sum_ns,
                "buckets": d.buckets}  # fmt: skip


@dataclass(frozen=True)
class PortStats:
    port: int
    rx_pkts: int
    rx_bytes: int
    rx_backlog_max: int
    """The most frames found waiting in the port's receive ring at once since the last reset."""
    tx_pkts: int
    tx_bytes: int
    tx_errors: int
    queues: tuple[QueueStats, ...]
    rx_wakeups: int = 0
    """Waits of the switch's event loop this port's arrivals ended, since start (0 from a switch
    that does not report it)."""


@dataclass(frozen=True)
class SwitchStats:
    ports: tuple[PortStats, ...]
    drops: dict[str, int]
    """Packets the switch dropped, by reason (no_program, parser, queue_full, ...)."""
    loop: dict[str, int] = field(default_factory=dict)
    """The event loop's counters since start (turns, turns_sent, turns_rx_only, turns_idle,
    looks, looks_answered); empty from a switch that does not report them."""

    def queues(self) -> list[QueueStats]:
        return [q for p in self.ports for q in p.queues]

    def wakeups_by_port(self) -> dict[str, int]:
        """{port: waits of the event loop its arrivals ended}, as loop.jsonl records it."""
        return {str(p.port): p.rx_wakeups for p in self.ports}

    def rx_backlog(self) -> dict[str, int]:
        """{port: most frames waiting in its receive ring at once}, as rx.jsonl records it."""
        return {str(p.port): p.rx_backlog_max for p in self.ports}


def _int(obj: dict[str, Any], key: str, where: str) -> int:
    v = obj.get(key)
    if not isinstance(v, int) or isinstance(v, bool):
        raise ValueError(f"stats_json: {where}: '{key}' is not an integer: {v!r}")
    return v


def _obj(v: Any, where: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise ValueError(f"stats_json: {where} is not an object")
    return v


def _list(v: Any, where: str) -> list[Any]:
    if not isinstance(v, list):
        raise ValueError(f"stats_json: {where} is not a list")
    return v


def _queue(port: int, raw: Any) -> QueueStats:
    q = _obj(raw, f"a queue of port {port}")
    where = f"port {port} queue {q.get('qid')}"
    d = _obj(q.get("delay_ns"), f"{where} delay_ns")
    buckets: dict[int, int] = {}
    for pair in _list(d.get("buckets"), f"{where} delay buckets"):
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, int) for x in pair)):
            raise ValueError(f"stats_json: {where}: a delay bucket is not [index, count]: {pair!r}")
        buckets[pair[0]] = pair[1]
    delay = QueueDelay(_int(d, "pkts", where), _int(d, "max", where), _int(d, "sum", where), buckets)
    return QueueStats(port=port, qid=_int(q, "qid", where), depth_pkts=_int(q, "depth_pkts", where),
                      depth_bytes=_int(q, "depth_bytes", where), enq_pkts=_int(q, "enq_pkts", where),
                      deq_pkts=_int(q, "deq_pkts", where), drops=_int(q, "drop_pkts", where),
                      delay=delay)  # fmt: skip


def _port(raw: Any) -> PortStats:
    p = _obj(raw, "a port")
    num = _int(p, "port", "a port")
    where = f"port {num}"
    queues = tuple(_queue(num, q) for q in _list(p.get("queues"), f"{where} queues"))
    return PortStats(port=num, rx_pkts=_int(p, "rx_pkts", where), rx_bytes=_int(p, "rx_bytes", where),
                     rx_backlog_max=_int(p, "rx_backlog_max", where), tx_pkts=_int(p, "tx_pkts", where),
                     tx_bytes=_int(p, "tx_bytes", where), tx_errors=_int(p, "tx_errors", where),
                     queues=queues, rx_wakeups=_int(p, "rx_wakeups", where) if "rx_wakeups" in p else 0)  # fmt: skip


def parse_stats(text: str) -> SwitchStats:
    """The switch's `stats_json` answer; ValueError naming the field that is missing or wrong."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"stats_json: not JSON: {e}") from None
    top = _obj(doc, "the answer")
    drops_raw = _obj(top.get("drops"), "drops")
    drops = {k: _int(drops_raw, k, "drops") for k in drops_raw}
    loop_raw = _obj(top.get("event_loop", {}), "event_loop")
    loop = {k: _int(loop_raw, k, "event_loop") for k in loop_raw}
    return SwitchStats(ports=tuple(_port(p) for p in _list(top.get("ports"), "ports")), drops=drops, loop=loop)


def read_stats(ctl: CommandClient, reset: bool = False) -> SwitchStats:
    """One `stats_json` read over a switch's command port; with `reset` the delay histograms and
    receive backlog maxima start afresh after it."""
    return parse_stats(ctl.run("stats_json reset" if reset else "stats_json"))
