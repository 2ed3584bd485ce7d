"""The controller of network-aware scheduling: polls every switch's nas counters over P4Runtime,
feeds them to the Detector, and carries out its decisions as one Write to the switch where the
flow yields (that Write is the feedback message). Every poll goes to nas_trace.jsonl, every
decision to the event list, with run-relative times."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from lanes.emu.topo import Flow, Topology
from lanes.lab.core import say
from lanes.nas.detect import Action, Detector, NasConfig
from lanes.nas.topo import path

TABLE = "nas_flow"


def _ip(addr: str) -> int:
    a, b, c, d = (int(x) for x in addr.split("."))
    return a << 24 | b << 16 | c << 8 | d


def flow_keys(topo: Topology, f: Flow) -> list[int]:
    """nas_flow's key of a flow: its source and destination addresses."""
    return [_ip(topo.hosts[f.src].ip), _ip(topo.hosts[f.dst].ip)]


class NasTables:
    """The nas_flow entries of the lab's switches (P4RuntimeTables, one per switch)."""

    def __init__(self, topo: Topology, tables: dict, cfg: NasConfig) -> None:
        self.topo, self.tables, self.cfg = topo, tables, cfg
        self.writes = 0

    def install(self, detector: Detector) -> int:
        """Track every flow at every switch on its path (set-up writes); returns how many."""
        n = 0
        for f in self.topo.flows:
            for s, _ in path(self.topo, f):
                self._write(s, f.key, "INSERT", "nas_track", [detector.index(f.key)])
                n += 1
        return n

    def demote(self, switch: str, key: str, idx: int) -> None:
        q = self.cfg.floor_quantum if self.cfg.mode == "floor" else self.cfg.replica_quantum
        self._write(switch, key, "MODIFY", "nas_demote", [idx, self.cfg.demote_prio, q])
        self.writes += 1

    def restore(self, switch: str, key: str, idx: int) -> None:
        self._write(switch, key, "MODIFY", "nas_track", [idx])
        self.writes += 1

    def _write(self, switch: str, key: str, kind: str, action: str, values: list[int]) -> None:
        f = next(f for f in self.topo.flows if f.key == key)
        self.tables[switch].write_exact(kind, TABLE, flow_keys(self.topo, f), action, values)


class Controller(threading.Thread):
    """`control`: off (watch only), manual (demote the victim at its first hop at `manual_s`,
    never restore: the original's hand trigger) or auto (the Detector, armed from `arm_s`)."""

    def __init__(self, topo: Topology, tables: dict, cfg: NasConfig, out: Path, *,
                 control: str, arm_s: float | None, manual_s: float | None, end_s: float) -> None:  # fmt: skip
        super().__init__(name="nas-controller", daemon=True)
        self.topo, self.cfg, self.out = topo, cfg, out
        self.t0 = time.monotonic()  # run time 0: set by the run before start()
        self.control, self.arm_s, self.manual_s, self.end_s = control, arm_s, manual_s, end_s
        self.detector = Detector(topo, cfg)
        self.detector.armed = False
        self.nas = NasTables(topo, tables, cfg)
        self.tables = tables
        self.events: list[dict] = []
        self.error: str | None = None
        self.polls = 0
        self._halt = threading.Event()
        self._cells = {
            s: [(c, self.detector.index(f.key)) for f in topo.flows if s in dict(path(topo, f))
                for c in ("nas_in", "nas_out")] + [("nas_port", p) for p in topo.port_rates(s)]
            for s in topo.switches
        }  # fmt: skip

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=5)

    def feedback_msgs(self) -> int:
        """Feedback messages so far: the controller's writes of demotions and restores."""
        return self.nas.writes

    @property
    def writes(self) -> int:
        """P4Runtime writes after set-up: the feedback messages themselves."""
        return self.nas.writes

    def sample(self) -> dict:
        out: dict = {}
        for s, cells in self._cells.items():
            got = self.tables[s].read_counters(cells)
            out[s] = {"in": {}, "out": {}, "port": {}}
            for (name, i), (pk, by) in got.items():
                if name == "nas_port":
                    out[s]["port"][i] = by
                else:
                    out[s][name.removeprefix("nas_")][i] = (pk, by)
        return out

    def run(self) -> None:
        try:
            with open(self.out / "nas_trace.jsonl", "w") as trace:
                self._loop(trace)
        except Exception as e:  # noqa: BLE001 - reported by the run, which stops with it
            self.error = f"{type(e).__name__}: {e}"

    def _loop(self, trace: object) -> None:
        next_t = time.monotonic()
        while not self._halt.is_set():
            t = round(time.monotonic() - self.t0, 3)
            if t > self.end_s:
                break
            if self.control == "auto" and self.arm_s is not None:
                self.detector.armed = t >= self.arm_s
            actions, seen = self.detector.step(t, self.sample())
            self.polls += 1
            if self.control == "auto":
                for a in actions:
                    self._apply(a)
            elif self.control == "manual" and self.manual_s is not None and t >= self.manual_s:
                self._manual(t)
            if seen:
                trace.write(json.dumps({"t": t, **seen}) + "\n")  # type: ignore[attr-defined]
            next_t += self.cfg.poll_s
            self._halt.wait(max(0.0, next_t - time.monotonic()))

    def _manual(self, t: float) -> None:
        self.manual_s = None
        victim = next((f for f in self.topo.flows if f.cls == "victim"), None)
        if victim is None:
            return
        first = path(self.topo, victim)[0][0]
        self._apply(Action(t, "demote", victim.key, first, "by hand"))

    def _apply(self, a: Action) -> None:
        idx = self.detector.index(a.flow)
        if a.kind == "demote":
            self.nas.demote(a.switch, a.flow, idx)
        else:
            self.nas.restore(a.switch, a.flow, idx)
        done = round(time.monotonic() - self.t0, 3)
        self.events.append({"t": a.t, "applied_t": done, "kind": a.kind, "flow": a.flow,
                            "switch": a.switch, "detected_at": a.detected_at, "loss": a.loss})  # fmt: skip
        say(f"t={a.t:.2f} s: {a.kind} {a.flow} at {a.switch}"
            + (f" (loses {a.loss:.0%} at {a.detected_at})" if a.kind == "demote" and a.loss else ""))
