"""Buffer occupancy per phase: how full each switch's egress queues were (sampled every 0.25 s)
and how many frames waited in each port's receive ring at once (the switch's own per-second
maximum). The switch sends with the qdisc bypassed, so there is no third, output buffer."""

from __future__ import annotations

from collections import defaultdict

from lanes.lab.cases import measured_from


def _in_phase(t: float, ph: dict, skip_s: float, span_s: float) -> bool:
    """Whether a sample taken at `t`, covering (t - span_s, t], lies in the phase's settled part
    (a sample over a span may come a little after the phase's end; an instant one may not)."""
    if span_s == 0:
        return measured_from(ph) + skip_s <= t < ph["end_s"]
    return measured_from(ph) + skip_s + span_s <= t <= ph["end_s"] + 0.25


def _stats(values: list[int]) -> dict:
    return {"mean": round(sum(values) / len(values), 2), "max": max(values), "samples": len(values)}


def per_phase(queue_records: list[dict], rx_records: list[dict], phases: list[dict], skip_s: float = 1.0) -> dict:  # fmt: skip
    """{switch: {phase: {"queues": {port: {qid: stats}}, "rx_backlog": {port: stats}}}}, with stats
    {mean, max, samples} in packets; the first `skip_s` of each phase is left out."""
    depth: dict = defaultdict(list)
    for rec in queue_records:
        for ph in phases:
            if _in_phase(rec["t"], ph, skip_s, 0.0):
                for q in rec["queues"]:
                    depth[(rec["switch"], ph["name"], str(q["port"]), str(q["qid"]))].append(q["depth_pkts"])
    rx: dict = defaultdict(list)
    for rec in rx_records:
        for ph in phases:
            if _in_phase(rec["t"], ph, skip_s, 1.0):
                for port, n in rec["ports"].items():
                    rx[(rec["switch"], ph["name"], port)].append(n)
    out: dict = {}

    def slot(switch: str, phase: str) -> dict:
        return out.setdefault(switch, {}).setdefault(phase, {"queues": {}, "rx_backlog": {}})

    for (s, ph, port, qid), v in sorted(depth.items()):
        slot(s, ph)["queues"].setdefault(port, {})[qid] = _stats(v)
    for (s, ph, port), v in sorted(rx.items()):
        slot(s, ph)["rx_backlog"][port] = _stats(v)
    return out
