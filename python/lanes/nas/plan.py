"""The `nas` case: phases, who sends when, and what each algorithm does.

Phases (fractions of the duration T):
  calibrate [0, .15T)    up and down alone, each on its own bottleneck: the ceiling, measured
  baseline  [.15T, .35T) the victim joins; nothing reacts: the network as it is
  gap       [.35T, .45T) down pauses; automatic detection is armed (it must stay quiet)
  active    [.45T, .75T) down is back: congestion onset at .45T; the mechanism acts
  reset     [.75T, T]    down stops for good: the victim must get its share back
A topology without some role (nas-line, or --roles) runs the phases with the flows it has.
"""

from __future__ import annotations

from dataclasses import dataclass

from lanes.emu.topo import Flow, Topology
from lanes.errors import LanesError
from lanes.lab.cases import Phase
from lanes.nas.topo import ROLES

# alg -> (scheduler of the switches, what the controller does, mode of a demotion)
NAS_ALGS = {
    "nas-off": ("strict", "off", "replica"),
    "nas-manual": ("strict", "manual", "replica"),
    "nas-auto": ("strict", "auto", "replica"),
    "nas-auto-floor": ("rlsp-drr", "auto", "floor"),
    "nas-inband": ("strict", "inband", "replica"),
    "nas-inband-floor": ("rlsp-drr", "inband", "floor"),
}
MANUAL_DELAY_S = 1.0  # the hand trigger, this long after the onset
# the data plane is switched on this long into the gap: by then a port that reported a flow in the
# baseline has ended a window without its competitor and forgotten it (windows are 250 ms)
ARM_LAG_S = 0.5


@dataclass(frozen=True)
class Sender:
    name: str  # victim | up | down-1 | down-2: one iperf client (and server port) each
    flow: Flow
    start_s: float
    end_s: float


@dataclass
class NasPlan:
    alg: str
    scheduler: str
    control: str  # off | manual | auto (the controller decides) | inband (the data plane does)
    mode: str  # replica | floor
    duration_s: float
    phases: list[Phase]
    senders: list[Sender]
    arm_s: float | None  # automatic detection on from here
    manual_s: float | None  # the hand trigger
    onset_s: float
    reset_s: float

    def phase(self, name: str) -> Phase:
        return next(p for p in self.phases if p.name == name)


def plan(topo: Topology, alg: str, duration_s: float, roles: list[str] | None = None) -> NasPlan:
    if alg not in NAS_ALGS:
        raise LanesError(f"unknown algorithm '{alg}' for case nas (expected one of {', '.join(NAS_ALGS)})")
    if not duration_s >= 20:
        raise LanesError(f"--duration must be at least 20 s for case nas, got {duration_s:g}")
    bad = [r for r in roles or [] if r not in ROLES]
    if bad:
        raise LanesError(f"unknown role(s) {', '.join(bad)} (expected some of {', '.join(ROLES)})")
    scheduler, control, mode = NAS_ALGS[alg]
    T = float(duration_s)
    cuts = [0, 0.15 * T, 0.35 * T, 0.45 * T, 0.75 * T, T]
    names = ["calibrate", "baseline", "gap", "active", "reset"]
    phases = [Phase(n, round(a, 3), round(b, 3)) for n, a, b in zip(names, cuts, cuts[1:], strict=False)]
    by_role = {f.cls: f for f in topo.flows if roles is None or f.cls in roles}
    senders = []
    if "up" in by_role:
        senders.append(Sender("up", by_role["up"], 0.0, T))
    if "down" in by_role:
        senders.append(Sender("down-1", by_role["down"], 0.0, phases[1].end_s))
        senders.append(Sender("down-2", by_role["down"], phases[3].start_s, phases[3].end_s))
    if "victim" in by_role:
        senders.append(Sender("victim", by_role["victim"], phases[1].start_s, T))
    if not senders:
        raise LanesError(f"topology {topo.name} has none of the roles {', '.join(roles or ROLES)}")
    onset = phases[3].start_s
    return NasPlan(
        alg, scheduler, control, mode, T, phases, senders,
        arm_s=phases[2].start_s + (ARM_LAG_S if control == "inband" else 0) if control in ("auto", "inband") else None,
        manual_s=onset + MANUAL_DELAY_S if control == "manual" else None,
        onset_s=onset, reset_s=phases[4].start_s,
    )  # fmt: skip
