"""The `nas` case: phases, who sends when, and what each algorithm does.

Phases (fractions of the duration T):
  calibrate [0, .15T)    up and down alone, each on its own bottleneck: the ceiling, measured
  baseline  [.15T, .35T) the victim joins; nothing reacts: the network as it is
  gap       [.35T, .45T) down pauses; automatic detection is armed (it must stay quiet)
  active    [.45T, .75T) down is back: congestion onset at .45T; the mechanism acts
  reset     [.75T, T]    down stops for good: the victim must get its share back
A topology without some role (nas-line, or --roles) runs the phases with the flows it has.

The original's timeline (`timeline="original"`, lanes.nas.original) keeps the hand trigger at a
given second M instead (17 s in the original) and lets down send through the baseline into the
trigger, as the original did:
  calibrate [0, 5)      up and down alone: the ceiling
  baseline  [5, M)      the victim joins; nothing reacts
  active    [M, M+15)   by hand: the trigger at M
  reset     [M+15, T]   down stops
An automatic variant has nothing to detect unless down arrives, so there down pauses for the last
ORIGINAL_GAP_S of the baseline (the gap) and comes back at M: the onset. Detection is armed
ORIGINAL_ARM_BEFORE_S before M, not at the gap's start: at these rates a full 50-packet queue
holds a second and more of down's packets after its sender stops (and iperf's pacing runs ahead of
the link, so the host's own queue holds some more), and a detector armed at once judges that tail.
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
TIMELINES = ["scaled", "original"]
ORIGINAL_CALIBRATE_S = 5.0
ORIGINAL_GAP_S = 4.0
ORIGINAL_ACTIVE_S = 15.0
ORIGINAL_RESET_S = 5.0  # at least: the hold time and a second or two to restore
ORIGINAL_ARM_BEFORE_S = 1.5


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


def plan(topo: Topology, alg: str, duration_s: float, roles: list[str] | None = None, *,
         timeline: str = "scaled", manual_at_s: float | None = None) -> NasPlan:  # fmt: skip
    """`manual_at_s`: the hand trigger's second (default: MANUAL_DELAY_S after the onset; with the
    original's timeline it is also the onset)."""
    if alg not in NAS_ALGS:
        raise LanesError(f"unknown algorithm '{alg}' for case nas (expected one of {', '.join(NAS_ALGS)})")
    if not duration_s >= 20:
        raise LanesError(f"--duration must be at least 20 s for case nas, got {duration_s:g}")
    bad = [r for r in roles or [] if r not in ROLES]
    if bad:
        raise LanesError(f"unknown role(s) {', '.join(bad)} (expected some of {', '.join(ROLES)})")
    if timeline not in TIMELINES:
        raise LanesError(f"unknown timeline '{timeline}' for case nas (expected one of {', '.join(TIMELINES)})")
    scheduler, control, mode = NAS_ALGS[alg]
    T = float(duration_s)
    if timeline == "original":
        return _original(topo, alg, T, roles, 17.0 if manual_at_s is None else manual_at_s)
    cuts = [0, 0.15 * T, 0.35 * T, 0.45 * T, 0.75 * T, T]
    names = ["calibrate", "baseline", "gap", "active", "reset"]
    phases = [Phase(n, round(a, 3), round(b, 3)) for n, a, b in zip(names, cuts, cuts[1:], strict=False)]
    onset = phases[3].start_s
    manual = (onset + MANUAL_DELAY_S if manual_at_s is None else manual_at_s) if control == "manual" else None
    return _plan(topo, alg, phases, roles, onset, manual, arm_lag=ARM_LAG_S if control == "inband" else 0.0)


def _original(topo: Topology, alg: str, T: float, roles: list[str] | None, trigger: float) -> NasPlan:
    control = NAS_ALGS[alg][1]
    gap = control in ("auto", "inband")
    first = ORIGINAL_CALIBRATE_S + (ORIGINAL_GAP_S if gap else 0) + 4.0  # a baseline of 4 s at least
    if not first <= trigger <= T - ORIGINAL_ACTIVE_S - ORIGINAL_RESET_S:
        raise LanesError(f"--manual-at must be {first:g} to {T - ORIGINAL_ACTIVE_S - ORIGINAL_RESET_S:g} s "
                         f"for {alg} on the original's timeline of {T:g} s, got {trigger:g}")  # fmt: skip
    cuts = [0.0, ORIGINAL_CALIBRATE_S, *([trigger - ORIGINAL_GAP_S] if gap else []), trigger,
            trigger + ORIGINAL_ACTIVE_S, T]  # fmt: skip
    names = ["calibrate", "baseline", *(["gap"] if gap else []), "active", "reset"]
    phases = [Phase(n, round(a, 3), round(b, 3)) for n, a, b in zip(names, cuts, cuts[1:], strict=False)]
    manual = trigger if control == "manual" else None
    return _plan(topo, alg, phases, roles, trigger, manual, arm_lag=ORIGINAL_GAP_S - ORIGINAL_ARM_BEFORE_S)


def _plan(topo: Topology, alg: str, phases: list[Phase], roles: list[str] | None, onset: float,
          manual_s: float | None, arm_lag: float) -> NasPlan:  # fmt: skip
    """Senders from the phases: up all along; down in calibrate up to the gap (or the active phase
    where there is no gap) and again in active; the victim from the baseline on. Automatic
    detection is armed `arm_lag` into the gap."""
    scheduler, control, mode = NAS_ALGS[alg]
    by_name = {ph.name: ph for ph in phases}
    T = phases[-1].end_s
    by_role = {f.cls: f for f in topo.flows if roles is None or f.cls in roles}
    senders = []
    if "up" in by_role:
        senders.append(Sender("up", by_role["up"], 0.0, T))
    if "down" in by_role:
        if "gap" in by_name:
            senders.append(Sender("down-1", by_role["down"], 0.0, by_name["gap"].start_s))
            senders.append(Sender("down-2", by_role["down"], onset, by_name["active"].end_s))
        else:
            senders.append(Sender("down-1", by_role["down"], 0.0, by_name["active"].end_s))
    if "victim" in by_role:
        senders.append(Sender("victim", by_role["victim"], by_name["baseline"].start_s, T))
    if not senders:
        raise LanesError(f"topology {topo.name} has none of the roles {', '.join(roles or ROLES)}")
    arm = None
    if control in ("auto", "inband"):
        arm = by_name["gap"].start_s + arm_lag
    return NasPlan(alg, scheduler, control, mode, T, phases, senders, arm_s=arm, manual_s=manual_s,
                   onset_s=onset, reset_s=by_name["reset"].start_s)  # fmt: skip
