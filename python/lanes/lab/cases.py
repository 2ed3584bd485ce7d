"""Test cases (thesis 6.2-6.3): phases, who sends when, and the control-plane actions of each
algorithm, as data.

Phase names per case:
  runtime   - fair_before [0, T/3), prioritized [T/3, 2T/3), fair_after [2T/3, T]
              all flows run the whole time; prioritisation is switched on and off by writes.
  proactive - low_only [0, T/2), high_present [T/2, T]
              medium and low flows run the whole time, the high flow joins at T/2.
  mpi       - load [0, W), mpi [W, end)
              medium and low flows load the network; the high pair runs the MPI ping-pong.

Class settings (priority, share of the link, quantum 7000 B) follow appendix 2; the writes are
the thesis's `table_modify src_ip_prio set_priority` commands, sent to every virtual switch
(switches holding host classes): strict needs one per class and change (N*M), the DRR family
one per change (N) in runtime and none in proactive; linux-htb mirrors them with tc changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lanes.emu.topo import CLASSES, Flow, Topology
from lanes.errors import LanesError

CASES = ["runtime", "proactive", "mpi"]
QUANTUM = 7000
THIRD = 1 / 3

# alg name -> (scheduler of the lanes switch, family of control-plane behaviour)
KNOWN_ALGS = {
    "no": ("fifo", "no"),
    "fifo": ("fifo", "no"),
    "strict": ("strict", "strict"),
    "rlsp-drr": ("rlsp-drr", "drr"),
    "rl-sp-drr": ("rlsp-drr", "drr"),
    "rlsp-drr-borrow": ("rlsp-drr-borrow", "drr"),
    "drr": ("drr", "drr"),
    "linux-htb": ("", "htb"),
}

# class -> (priority, fraction of the link) at the start of each case, per family
_RUNTIME_FAIR = {"high": (6, THIRD), "medium": (5, THIRD), "low": (4, THIRD)}
_PRIORITIZED = {"high": (7, 0.6), "medium": (5, 0.2), "low": (4, 0.2)}
_PROACTIVE_STRICT = {"high": (7, 0.6), "medium": (5, 0.5), "low": (4, 0.5)}


@dataclass(frozen=True)
class Phase:
    name: str
    start_s: float
    end_s: float


def measured_from(phase: dict) -> float:
    """A phase's numbers start when its change took effect: its planned start, or later when the
    control writes came late (a busy machine), so the old setting's losses are not counted in."""
    return max(phase["start_s"], phase.get("changed_s") or 0.0)


@dataclass(frozen=True)
class FlowRun:
    flow: Flow
    start_s: float
    end_s: float | None  # None: until the case ends (mpi)


@dataclass(frozen=True)
class ClassSetting:
    prio: int
    rate_Bps: int
    quantum: int = QUANTUM


@dataclass(frozen=True)
class Write:
    t_s: float
    switch: str
    prefix: str
    cls: str
    setting: ClassSetting


@dataclass
class Plan:
    case: str
    alg: str
    scheduler: str
    family: str
    duration_s: float
    phases: list[Phase]
    flows: list[FlowRun]
    initial: dict[str, dict[str, ClassSetting]]  # switch -> prefix -> setting
    writes: list[Write] = field(default_factory=list)
    mpi_start_s: float | None = None


def resolve_alg(alg: str) -> tuple[str, str]:
    if alg in KNOWN_ALGS:
        return KNOWN_ALGS[alg]
    raise LanesError(f"unknown algorithm '{alg}' (expected one of {', '.join(KNOWN_ALGS)})")


def _setting(prio_frac: tuple[int, float], mbps: float) -> ClassSetting:
    prio, frac = prio_frac
    return ClassSetting(prio, round(frac * mbps * 1e6 / 8))


def _table(topo: Topology, switch: str, by_class: dict[str, tuple[int, float]]) -> dict[str, ClassSetting]:
    out = {}
    for e in topo.classes[switch]:
        pf = by_class.get(e.cls, (3, 1.0))
        out[e.prefix] = _setting(pf, e.share_mbps)
    return out


def _writes(
    topo: Topology, t: float, by_class: dict[str, tuple[int, float]], classes: list[str]
) -> list[Write]:
    return [
        Write(t, s, e.prefix, e.cls, _setting(by_class[e.cls], e.share_mbps))
        for s in topo.vswitches()
        for e in topo.classes[s]
        if e.cls in classes
    ]


def plan(topo: Topology, case: str, alg: str, duration_s: float, mpi_warmup_s: float = 3.0) -> Plan:
    if case not in CASES:
        raise LanesError(f"unknown case '{case}' (expected one of {', '.join(CASES)})")
    if not duration_s >= 3:
        raise LanesError(f"--duration must be at least 3 s, got {duration_s:g}")
    scheduler, family = resolve_alg(alg)
    T = float(duration_s)
    vs = topo.vswitches()

    def initial(by_class: dict[str, tuple[int, float]]) -> dict[str, dict[str, ClassSetting]]:
        return {s: _table(topo, s, by_class if s in vs else {}) for s in topo.switches}

    if case == "runtime":
        p = Plan(
            case, alg, scheduler, family, T,
            [Phase("fair_before", 0, T / 3), Phase("prioritized", T / 3, 2 * T / 3),
             Phase("fair_after", 2 * T / 3, T)],
            [FlowRun(f, 0, T) for f in topo.flows],
            initial(_RUNTIME_FAIR),
        )  # fmt: skip
        if family == "strict":
            p.writes = _writes(topo, T / 3, _PRIORITIZED | {"high": (6, 0.6)}, CLASSES)
            p.writes += _writes(topo, 2 * T / 3, _RUNTIME_FAIR, CLASSES)
        elif family in ("drr", "htb"):
            p.writes = _writes(topo, T / 3, _PRIORITIZED, ["high"])
            p.writes += _writes(topo, 2 * T / 3, _RUNTIME_FAIR, ["high"])
        return p
    if case == "proactive":
        flows = [FlowRun(f, T / 2 if f.cls == "high" else 0, T) for f in topo.flows]
        phases = [Phase("low_only", 0, T / 2), Phase("high_present", T / 2, T)]
        if family == "strict":
            p = Plan(case, alg, scheduler, family, T, phases, flows, initial(_PROACTIVE_STRICT))
            # rates of the lower classes cut when the high class appears: N*(M-1) writes
            p.writes = _writes(topo, T / 2, _PRIORITIZED, ["medium", "low"])
            return p
        return Plan(case, alg, scheduler, family, T, phases, flows, initial(_PRIORITIZED))
    # mpi: the high pair runs MPI, the others load the network; no writes after set-up
    w = min(mpi_warmup_s, T / 4)
    flows = [FlowRun(f, 0, None) for f in topo.flows if f.cls != "high"]
    return Plan(
        case, alg, scheduler, family, T, [Phase("load", 0, w), Phase("mpi", w, T)], flows,
        initial(_PRIORITIZED), mpi_start_s=w,
    )  # fmt: skip
