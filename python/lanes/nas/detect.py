"""The decision part of network-aware scheduling, as a pure function of counter samples: which
flow dies at a downstream port, which upstream switch it should yield at, and when that ends.

Signal: a flow's loss in a switch's queues, `nas_in - nas_out` over a poll interval divided by
`nas_in` (the switch counts both sides of its traffic manager), and each port's load from
`nas_port`. Not queue occupancy: a full queue that loses nothing is not a reason to act.

Rules, per flow f with hops h0..hn (switch, output port) from its source:
- f is *doomed* at hop k >= 1 when it loses at least `loss_threshold` there in `windows`
  consecutive polls (each with at least `min_pkts` of f arriving).
- It yields at the first hop j < k whose port is a *shared bottleneck*: loaded to at least
  `busy_util` of its rate and crossed by another flow that sends there. No such hop: nothing to
  gain upstream (a lone flow, or one that only competes downstream), so nothing is done.
- While demoted, the downstream port refreshes the state as long as it has no room for what f
  brought it before (spare < `room_fraction` x f's arrival rate there). `hold_s` after the last
  refresh f is restored. Between two changes of one flow's state at least `hold_s` pass, so a
  flow changes state at most once per hold time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lanes.emu.topo import Flow, Topology
from lanes.nas.topo import path

# switch -> {"in": {flow index: (packets, bytes)}, "out": {...}, "port": {port: bytes}}, cumulative
Sample = dict[str, dict[str, dict[int, tuple[int, int] | int]]]


@dataclass(frozen=True)
class NasConfig:
    mode: str = "replica"  # replica: a lower strict queue | floor: a DRR queue with a small quantum
    poll_s: float = 0.25
    loss_threshold: float = 0.05
    windows: int = 3
    min_pkts: int = 20
    busy_util: float = 0.9
    room_fraction: float = 0.8
    hold_s: float = 3.0
    normal_prio: int = 3
    demote_prio: int = 1
    floor_quantum: int = 450  # against the others' 7000: about 6 % of the port when both are backlogged
    replica_quantum: int = 7000


@dataclass
class Action:
    t: float
    kind: str  # demote | restore
    flow: str  # Flow.key
    switch: str  # where the flow's class changes
    detected_at: str = ""  # switch:port where it was doomed (demote)
    loss: float = 0.0  # its loss there over the detection windows (demote)


@dataclass
class _FlowState:
    idx: int
    hops: list[tuple[str, int]]
    streak: dict[int, int] = field(default_factory=dict)  # hop -> consecutive lossy polls
    demoted_at: str | None = None  # switch
    doomed_hop: int = 0
    arrival_Bps: float = 0.0  # what f brought to the doomed port before it yielded
    changed_t: float = float("-inf")
    refreshed_t: float = float("-inf")


class Detector:
    def __init__(self, topo: Topology, cfg: NasConfig) -> None:
        self.topo = topo
        self.cfg = cfg
        self.flows: dict[str, _FlowState] = {
            f.key: _FlowState(i, path(topo, f)) for i, f in enumerate(topo.flows, 1)
        }
        self.by_key: dict[str, Flow] = {f.key: f for f in topo.flows}
        self.rates = {s: topo.port_rates(s) for s in topo.switches}
        self.prev: Sample | None = None
        self.prev_t = 0.0
        self.armed = True
        self.rate_hist: dict[tuple[str, int], list[float]] = {}  # (flow, hop) -> recent arrivals B/s

    def index(self, key: str) -> int:
        return self.flows[key].idx

    def step(self, t: float, sample: Sample) -> tuple[list[Action], dict]:
        """Take the counters read at time t; return the actions to carry out and what was seen
        (loss per flow and hop, load per port) for the trace."""
        prev, self.prev = self.prev, sample
        dt, self.prev_t = t - self.prev_t, t
        if prev is None or dt <= 0:
            return [], {}
        seen_loss: dict[str, list[float | None]] = {}
        load: dict[str, float] = {}
        for s in self.topo.switches:
            for port, mbps in self.rates[s].items():
                b = _delta(sample[s]["port"].get(port, 0), prev[s]["port"].get(port, 0))
                load[f"{s}:{port}"] = b * 8 / dt / (mbps * 1e6)
        per_flow_pkts: dict[tuple[str, str], int] = {}
        for key, fs in self.flows.items():
            losses: list[float | None] = []
            for h, (s, _) in enumerate(fs.hops):
                pin, bin_ = _delta2(sample[s]["in"].get(fs.idx, (0, 0)), prev[s]["in"].get(fs.idx, (0, 0)))
                pout, _ = _delta2(sample[s]["out"].get(fs.idx, (0, 0)), prev[s]["out"].get(fs.idx, (0, 0)))
                per_flow_pkts[(key, s)] = pin
                if pin < self.cfg.min_pkts:
                    losses.append(None)
                    fs.streak[h] = 0
                    continue
                loss = max(0.0, (pin - pout) / pin)
                losses.append(round(loss, 4))
                hist = self.rate_hist.setdefault((key, h), [])
                hist.append(bin_ / dt)
                del hist[: -self.cfg.windows]
                # only polls made while armed count: a detector switched on must see the loss
                # itself, not inherit a streak from before
                lossy = loss >= self.cfg.loss_threshold and self.armed
                fs.streak[h] = fs.streak.get(h, 0) + 1 if lossy else 0
            seen_loss[key] = losses
        actions: list[Action] = []
        for key, fs in self.flows.items():
            if fs.demoted_at is not None:
                actions += self._age(t, key, fs, load)
            elif self.armed:
                actions += self._judge(t, key, fs, load, per_flow_pkts, seen_loss[key])
        return actions, {"loss": seen_loss, "load": {k: round(v, 4) for k, v in load.items()}}

    def _judge(self, t: float, key: str, fs: _FlowState, load: dict[str, float],
               pkts: dict[tuple[str, str], int], losses: list[float | None]) -> list[Action]:  # fmt: skip
        if t - fs.changed_t < self.cfg.hold_s:
            return []
        doomed = next((h for h in range(1, len(fs.hops)) if fs.streak.get(h, 0) >= self.cfg.windows), None)
        if doomed is None:
            return []
        for j in range(doomed):
            s, port = fs.hops[j]
            if load[f"{s}:{port}"] < self.cfg.busy_util:
                continue
            others = [
                k for k, o in self.flows.items()
                if k != key and (s, port) in o.hops and pkts.get((k, s), 0) >= self.cfg.min_pkts
            ]  # fmt: skip
            if not others:
                continue
            hist = self.rate_hist.get((key, doomed), [0.0])
            fs.demoted_at, fs.doomed_hop = s, doomed
            fs.arrival_Bps = sum(hist) / len(hist)
            fs.changed_t = fs.refreshed_t = t
            fs.streak.clear()
            ds, dp = fs.hops[doomed]
            return [Action(t, "demote", key, s, f"{ds}:{dp}", losses[doomed] or 0.0)]
        return []

    def _age(self, t: float, key: str, fs: _FlowState, load: dict[str, float]) -> list[Action]:
        ds, dp = fs.hops[fs.doomed_hop]
        cap_Bps = self.rates[ds][dp] * 1e6 / 8
        spare = (1.0 - load[f"{ds}:{dp}"]) * cap_Bps
        if spare < self.cfg.room_fraction * fs.arrival_Bps:
            fs.refreshed_t = t
            return []
        if t - fs.refreshed_t < self.cfg.hold_s or t - fs.changed_t < self.cfg.hold_s:
            return []
        at = fs.demoted_at
        fs.demoted_at = None
        fs.changed_t = t
        fs.streak.clear()
        return [Action(t, "restore", key, at or "")]


def _delta(now: object, before: object) -> int:
    return max(0, int(now) - int(before))  # type: ignore[call-overload]


def _delta2(now: tuple[int, int], before: tuple[int, int]) -> tuple[int, int]:
    return max(0, now[0] - before[0]), max(0, now[1] - before[1])
