"""Numbers the thesis published (chapter 7), keyed like our summaries, for the report tables.

Keys: (topo, case, proto, alg) -> metric -> value. Link rates of the thesis: star 100 Mb/s,
tree1 50 Mb/s, tree2 10 Mb/s. Latencies in ms; ranges are given as the value in the phase
where the high class is present (the end value where the thesis gives "from -> to")."""

from __future__ import annotations

THESIS_LINK_MBPS = {"star": 100, "tree1": 50, "tree2": 10}

PUBLISHED: dict[tuple[str, str, str, str], dict[str, float]] = {
    ("star", "proactive", "udp", "no"): {"high_loss_pct": 37, "high_owd_ms": 30, "low_owd_ms": 30},
    ("star", "proactive", "udp", "strict"): {
        "high_loss_pct": 0, "low_loss_pct": 63, "high_owd_ms": 0.2, "low_owd_ms": 26, "low_mbps": 19,
    },
    ("star", "proactive", "udp", "rlsp-drr"): {
        "high_loss_pct": 0, "low_loss_pct": 58, "high_owd_ms": 26, "low_owd_ms": 43, "low_mbps": 22,
    },
    ("star", "runtime", "udp", "no"): {"high_loss_pct": 37, "high_owd_ms": 30},
    ("star", "runtime", "udp", "strict"): {
        "high_loss_pct": 0, "low_loss_pct": 63, "high_owd_ms": 10, "low_owd_ms": 31, "low_mbps": 19,
    },
    ("star", "runtime", "udp", "rlsp-drr"): {
        "high_loss_pct": 0, "low_loss_pct": 58, "high_owd_ms": 33, "low_owd_ms": 50, "low_mbps": 22,
    },
    ("tree1", "runtime", "udp", "no"): {"high_owd_ms": 62, "low_owd_ms": 62},
    ("tree1", "runtime", "udp", "strict"): {
        "high_loss_pct": 0, "low_loss_pct": 63, "high_owd_ms": 20, "low_owd_ms": 60, "low_mbps": 9.7,
    },
    ("tree1", "runtime", "udp", "rlsp-drr"): {
        "high_loss_pct": 0, "low_loss_pct": 58, "high_owd_ms": 71, "low_owd_ms": 106, "low_mbps": 11,
    },
    ("tree1", "proactive", "udp", "no"): {"high_owd_ms": 61, "low_owd_ms": 61},
    ("tree1", "proactive", "udp", "strict"): {"high_loss_pct": 0, "high_owd_ms": 1, "low_owd_ms": 51},
    ("tree1", "proactive", "udp", "rlsp-drr"): {"high_loss_pct": 0.8, "high_owd_ms": 53, "low_owd_ms": 89},
    ("tree2", "runtime", "udp", "no"): {"high_owd_ms": 315, "low_owd_ms": 315},
    ("tree2", "runtime", "udp", "strict"): {"high_loss_pct": 0, "high_owd_ms": 100, "low_owd_ms": 300},
    ("tree2", "runtime", "udp", "rlsp-drr"): {
        "high_loss_pct": 0, "high_owd_ms": 347, "low_owd_ms": 520, "high_mbps": 5.2, "low_mbps": 2.2,
    },
    ("tree2", "proactive", "udp", "no"): {"high_owd_ms": 313, "low_owd_ms": 303},
    ("tree2", "proactive", "udp", "strict"): {"high_loss_pct": 0, "high_owd_ms": 4, "low_owd_ms": 227},
    ("tree2", "proactive", "udp", "rlsp-drr"): {"high_loss_pct": 0.89, "high_owd_ms": 278, "low_owd_ms": 443},
    ("star", "mpi", "tcp", "no"): {"mpi_1024_ms": 43.4},
    ("star", "mpi", "tcp", "strict"): {"mpi_1024_ms": 0.59},
    ("star", "mpi", "tcp", "rlsp-drr"): {"mpi_1024_ms": 39.3},
    ("star", "mpi", "udp", "no"): {"mpi_1024_ms": 227},
    ("star", "mpi", "udp", "strict"): {"mpi_1024_ms": 0.98},
    ("star", "mpi", "udp", "rlsp-drr"): {"mpi_1024_ms": 192},
    ("tree2", "mpi", "tcp", "no"): {"mpi_16384_ms": 1700},
    ("tree2", "mpi", "tcp", "strict"): {"mpi_16384_ms": 50},
    ("tree2", "mpi", "tcp", "rlsp-drr"): {"mpi_16384_ms": 1400},
    ("tree2", "mpi", "udp", "no"): {"mpi_16384_ms": 3900},
    ("tree2", "mpi", "udp", "strict"): {"mpi_16384_ms": 51},
    ("tree2", "mpi", "udp", "rlsp-drr"): {"mpi_16384_ms": 2600},
}  # fmt: skip


# RUNTIME transition times (thesis 7.1, TOPO-1, TCP): seconds from the priority change until the
# high class holds its prioritised rate ("almost instant" for strict: 0 within our 1-s resolution)
TRANSITIONS: dict[tuple[str, str, str, str], dict[str, float]] = {
    ("star", "runtime", "tcp", "rlsp-drr"): {"to_prioritized_s": 4},
    ("star", "runtime", "tcp", "strict"): {"to_prioritized_s": 0},
}

# The thesis's conference paper, its evaluation: tree2 (its TOPO-3 with 12 hosts) at 10 Mb/s, UDP load. High-class
# throughput with the high class present (PROACTIVE), MPI ping-pong latency at 16 KiB (ms).
PAPER: dict[tuple[str, str, str, str], dict[str, float]] = {
    ("tree2", "proactive", "udp", "strict"): {"high_mbps": 5.3},
    ("tree2", "proactive", "udp", "rlsp-drr"): {"high_mbps": 5.3},
    ("tree2", "mpi", "udp", "no"): {"mpi_16384_ms": 3900},
    ("tree2", "mpi", "udp", "strict"): {"mpi_16384_ms": 51},
    ("tree2", "mpi", "udp", "rlsp-drr"): {"mpi_16384_ms": 2600},
}
PAPER_LINK_MBPS = 10.0

# What kind of number each published value is. The thesis reads its chapter-7 numbers off per-second
# plots; most are a level the series holds (a plateau, "constant", "consistent"), which a phase mean
# can be compared with. The others (default "mean"):
# - "peak": a single second's value or the top of a rising series ("increases up to 520 ms", "0.89 %
#   at the 147th second"). A phase mean cannot be compared with it.
# - "falling_end": where a falling series ends ("drops from 27 ms to 10 ms"). The thesis's phase mean
#   is at least this, so a mean of ours well below it is lower; anything else is not comparable.
PEAK, FALLING_END = "peak", "falling_end"
KINDS: dict[tuple[str, str, str, str], dict[str, str]] = {
    ("star", "runtime", "udp", "strict"): {"high_owd_ms": FALLING_END, "low_owd_ms": PEAK},
    ("star", "runtime", "udp", "rlsp-drr"): {"high_owd_ms": FALLING_END, "low_owd_ms": PEAK},
    ("star", "proactive", "udp", "strict"): {"high_owd_ms": FALLING_END, "low_owd_ms": PEAK},
    ("star", "proactive", "udp", "rlsp-drr"): {"low_owd_ms": PEAK},
    ("tree1", "runtime", "udp", "strict"): {"high_owd_ms": FALLING_END, "low_owd_ms": PEAK},
    ("tree1", "runtime", "udp", "rlsp-drr"): {"high_owd_ms": FALLING_END, "low_owd_ms": PEAK},
    ("tree1", "proactive", "udp", "strict"): {"high_owd_ms": FALLING_END, "low_owd_ms": PEAK},
    ("tree1", "proactive", "udp", "rlsp-drr"): {"high_loss_pct": PEAK, "low_owd_ms": PEAK},
    ("tree2", "runtime", "udp", "strict"): {"high_owd_ms": FALLING_END, "low_owd_ms": PEAK},
    ("tree2", "runtime", "udp", "rlsp-drr"): {"high_owd_ms": FALLING_END, "low_owd_ms": PEAK},
    ("tree2", "proactive", "udp", "strict"): {"high_owd_ms": FALLING_END, "low_owd_ms": PEAK},
    ("tree2", "proactive", "udp", "rlsp-drr"): {"high_loss_pct": PEAK, "low_owd_ms": PEAK},
}  # fmt: skip


def kind_of(key: tuple[str, str, str, str], metric: str) -> str:
    """'mean' (a level the thesis's series holds), 'peak' or 'falling_end'; see KINDS."""
    return KINDS.get(key, {}).get(metric, "mean")


# What always differs from the thesis's set-up, whatever the cell: the switch (our traffic manager
# paces each port from its queues and has no output buffer; bmv2 has 1024-packet input, 64-packet
# egress and 128-packet output buffers, thesis 5.2), and the machine (the thesis: a 4-core i5-4590
# with 16 GB; ours: a 2-core shared VM).
ALWAYS_DIFFERS = ["switch: paced TM vs bmv2's", "buffers: 64-pkt queues, no output buffer vs bmv2's 1024/64/128",
                  "CPU: 2 shared cores vs 4-core i5"]  # fmt: skip


def control_writes(case: str, alg: str, n_vswitches: int, m_classes: int = 3) -> int | None:
    """Thesis 7.4 (a formula, not a measurement): writes after set-up. runtime: strict N*M per change (two changes), the DRR
    family N per change; proactive: strict N*(M-1) when the high class appears, DRR none."""
    family = "strict" if alg == "strict" else ("no" if alg in ("no", "fifo") else "drr")
    if family == "no" or case == "mpi":
        return 0
    if case == "runtime":
        return 2 * n_vswitches * (m_classes if family == "strict" else 1)
    if case == "proactive":
        return n_vswitches * (m_classes - 1) if family == "strict" else 0
    return None
