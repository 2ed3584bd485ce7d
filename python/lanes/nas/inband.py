"""Network-aware scheduling in the data plane (p4/nas_inband): what the lab sets up before traffic,
and an observer that only reads the switches' registers to record what they did on their own.

Set-up, per switch: the flows to watch (nas_flow: source, destination -> index), each port's
busy threshold (90 % of its rate over one 250 ms window) and whether it faces a host (nas_port),
a clone session per port towards another switch (session n -> port n: where feedback may go), and
a hold time of 0 (nas_hold: nothing is demoted). The one write after that switches the mechanism
on: the hold time, at the plan's arm time. The switches do the rest on their own.

The observer polls every switch's nas_demoted_until (a flow is demoted while it lies ahead of the
switch's clock, CLOCK_MONOTONIC in us as ours), nas_in and nas_out (loss per flow and hop, for the
trace) and nas_events (feedback sent). A demotion's start is its deadline less the hold time and
its end the deadline itself, both exact whatever the poll period.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from lanes.emu.topo import Topology
from lanes.lab.core import say
from lanes.nas.controller import TABLE, flow_keys
from lanes.nas.detect import NasConfig
from lanes.nas.topo import path

WINDOW_S = 0.25  # the program's WINDOW_US
BUSY = 0.9  # a port is busy when a window carries this much of its rate
POLL_S = 0.1
FEEDBACK_SENT = 3  # nas_events index
MARGIN_US = 1000


def install(topo: Topology, tables: dict, cfg: NasConfig) -> int:
    """Write the set-up entries; returns how many writes that took."""
    n = 0
    for i, f in enumerate(topo.flows, 1):
        for s, _ in path(topo, f):
            tables[s].write_exact("INSERT", TABLE, flow_keys(topo, f), "nas_watch", [i])
            n += 1
    for s in topo.switches:
        host_ports = {h.port for h in topo.hosts.values() if h.switch == s}
        for port, mbps in topo.port_rates(s).items():
            busy = round(BUSY * mbps * 1e6 / 8 * WINDOW_S)
            tables[s].write_exact("INSERT", "nas_port", [port], "nas_port_cfg", [busy, int(port in host_ports)])
            n += 1
            if port not in host_ports:
                tables[s].add_clone_session(port, port)
                n += 1
        tables[s].write_register("nas_hold", 0, 0)  # off until the observer arms it
        n += 1
    return n


class InbandObserver(threading.Thread):
    """Reads what the data plane does; writes nothing. Same surface as the Controller."""

    def __init__(self, topo: Topology, tables: dict, cfg: NasConfig, out: Path, *, arm_s: float | None,
                 end_s: float) -> None:  # fmt: skip
        super().__init__(name="nas-observer", daemon=True)
        self.topo, self.tables, self.cfg, self.out, self.end_s = topo, tables, cfg, out, end_s
        self.arm_s = arm_s  # when the hold time is written: the one write after set-up
        self.t0 = time.monotonic()  # run time 0: set by the run before start()
        self.events: list[dict] = []
        self.error: str | None = None
        self.polls = 0
        self.sent = 0
        self.sent_before_arm: int | None = None  # feedback the data plane sent while the hold was 0
        self.writes = 0  # P4Runtime writes after set-up: the hold time, one per switch
        self._halt = threading.Event()
        self._hops = {f.key: path(topo, f) for f in topo.flows}
        self._idx = {f.key: i for i, f in enumerate(topo.flows, 1)}
        self._demoted: dict[tuple[str, str], int] = {}  # (switch, flow) -> deadline in us
        self._prev: dict | None = None

    def feedback_msgs(self) -> int:
        return self.sent

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=5)

    def run(self) -> None:
        try:
            with open(self.out / "nas_trace.jsonl", "w") as trace:
                while not self._halt.is_set():
                    t = time.monotonic() - self.t0
                    if t > self.end_s:
                        break
                    if self.arm_s is not None and t >= self.arm_s:
                        self.arm_s = None
                        self.sent_before_arm = self.sent
                        for tab in self.tables.values():
                            tab.write_register("nas_hold", 0, round(self.cfg.hold_s * 1e6))
                            self.writes += 1
                    self._poll(t, trace)
                    self._halt.wait(POLL_S)
            self._finish()
        except Exception as e:  # noqa: BLE001 - reported by the run, which stops with it
            self.error = f"{type(e).__name__}: {e}"

    def _read(self) -> dict:
        out = {}
        for s in self.topo.switches:
            cells = [(r, self._idx[k]) for k, hops in self._hops.items() if s in dict(hops)
                     for r in ("nas_demoted_until", "nas_in", "nas_out")]  # fmt: skip
            regs = self.tables[s].read_registers(cells) if cells else {}
            events = self.tables[s].read_counters([("nas_events", FEEDBACK_SENT)])
            out[s] = {"regs": regs, "sent": events.get(("nas_events", FEEDBACK_SENT), (0, 0))[0]}
        return out

    def _poll(self, t: float, trace: object) -> None:
        cur = self._read()
        # the clock after the read, and a margin: a deadline written while the read was under
        # way (or with a hold time of 0, before arming: the deadline is the feedback's own time,
        # and the switch's clock runs 20 us ahead) is not a demotion
        now_us = time.monotonic_ns() // 1000 + MARGIN_US
        self.polls += 1
        self.sent = sum(v["sent"] for v in cur.values())
        for k, hops in self._hops.items():
            i = self._idx[k]
            for s, _ in hops:
                until = cur[s]["regs"].get(("nas_demoted_until", i), 0)
                self._track(s, k, until, now_us)
        if self._prev is not None:
            loss: dict[str, list[float | None]] = {}
            for k, hops in self._hops.items():
                i, row = self._idx[k], []
                for s, _ in hops:
                    a, b = cur[s]["regs"], self._prev[s]["regs"]
                    pin = a.get(("nas_in", i), 0) - b.get(("nas_in", i), 0)
                    pout = a.get(("nas_out", i), 0) - b.get(("nas_out", i), 0)
                    row.append(round(max(0.0, (pin - pout) / pin), 4) if pin >= self.cfg.min_pkts else None)
                loss[k] = row
            trace.write(json.dumps({"t": round(t, 3), "loss": loss, "feedback_sent": self.sent}) + "\n")  # type: ignore[attr-defined]
        self._prev = cur

    def _track(self, switch: str, flow: str, until_us: int, now_us: int) -> None:
        """Turn a deadline into demote and restore events (run time, exact)."""
        hold_us = round(self.cfg.hold_s * 1e6)
        key = (switch, flow)
        before = self._demoted.get(key)
        if until_us > now_us:
            if before is None:  # a new demotion: it started a hold time before its deadline
                self._event(until_us - hold_us, "demote", flow, switch)
            self._demoted[key] = until_us
        elif before is not None:
            self._event(before, "restore", flow, switch)
            del self._demoted[key]

    def _finish(self) -> None:
        for (switch, flow), until in list(self._demoted.items()):
            if until <= time.monotonic_ns() // 1000:
                self._event(until, "restore", flow, switch)

    def _event(self, at_us: int, kind: str, flow: str, switch: str) -> None:
        t = round(at_us / 1e6 - self.t0, 3)
        self.events.append({"t": t, "applied_t": t, "kind": kind, "flow": flow, "switch": switch,
                            "detected_at": "in band", "loss": 0.0})  # fmt: skip
        say(f"t={t:.2f} s: {kind} {flow} at {switch} (data plane)")
