"""RUNTIME transition times (thesis 7.1): after the priority change, how long until the high
class holds its prioritised rate; after the change back, how long until it is back at its fair
share. Read twice: from the per-second series of the high flows (iperf's, as the thesis read
its figures) and, for lanes, from the switch's own dequeue counters of the high class at the
source's virtual switch, sampled every 0.25 s.

A transition is over at the first interval from which the rate stays within TOLERANCE of the
phase's settled rate (the mean of the phase's second half) for HOLD_S seconds in a row. The
answer is in whole sampling intervals, counted from the planned change to the end of that
interval."""

from __future__ import annotations

TOLERANCE = 0.10  # of the settled rate
HOLD_S = 3
SWITCH_SAMPLE_S = 0.25  # the lab monitor's period
SWITCH_HOLD_S = 1.0


def settled_mbps(rows: list[dict], a: float, b: float, slack_s: float = 0.25) -> float | None:
    """Mean rate over the second half of [a, b] (the phase after it settled); a row stamped up
    to `slack_s` after b still counts (iperf's report of the phase's last second)."""
    mid = a + (b - a) / 2
    v = [r["mbps"] for r in rows if mid < r["t"] <= b + slack_s]
    return sum(v) / len(v) if v else None


def time_to_settle(rows: list[dict], change_s: float, end_s: float, tolerance: float = TOLERANCE,
                   hold: int = HOLD_S, interval_s: float = 1.0, slack_s: float = 0.25) -> float | None:  # fmt: skip
    """Seconds from `change_s` until the series (one row per `interval_s`, stamped at its end)
    stays within `tolerance` of its settled rate for `hold` rows; None if the phase has no
    settled rate or never settles."""
    target = settled_mbps(rows, change_s, end_s, slack_s)
    if not target:
        return None
    after = sorted((r for r in rows if change_s < r["t"] <= end_s + slack_s), key=lambda r: r["t"])
    ok = [abs(r["mbps"] - target) <= tolerance * target for r in after]
    for i in range(len(after) - hold + 1):
        if all(ok[i : i + hold]):
            # the interval ending at after[i]["t"] is the first on target: it began one interval earlier
            return round(max(0.0, after[i]["t"] - interval_s - change_s), 3)
    return None


def dequeue_rates(records: list[dict], switch: str, port: int, qids: set[int]) -> list[dict]:
    """Rows {t, mbps} of the frames a switch port sent from queues `qids`, between consecutive
    monitor samples (telemetry.jsonl records); mbps counts 1500-byte frames, for the shape only."""
    rows, prev = [], None
    for rec in records:
        if rec["switch"] != switch:
            continue
        deq = sum(q["deq_pkts"] for q in rec["queues"] if q["port"] == port and q["qid"] in qids)
        if prev is not None and rec["t"] > prev[0]:
            rows.append({"t": rec["t"], "mbps": (deq - prev[1]) * 1500 * 8 / 1e6 / (rec["t"] - prev[0])})
        prev = (rec["t"], deq)
    return rows


def runtime_transitions(summary: dict, series: dict[str, list[dict]],
                        switch_series: dict[str, list[dict]] | None = None) -> dict[str, dict[str, float | None]]:  # fmt: skip
    """Per high flow: {"to_prioritized_s", "to_fair_s"} from its per-second series, and the same
    with a "switch_" prefix from `switch_series` (per flow, 0.25-s rows) when given; {} for other
    cases."""
    if summary["params"]["case"] != "runtime":
        return {}
    ph = {p["name"]: p for p in summary["phases"]}
    if not {"prioritized", "fair_after"} <= ph.keys():
        return {}
    out = {}
    for key, f in summary["flows"].items():
        if f["class"] != "high":
            continue
        rows = series.get(key, [])
        p, fa = ph["prioritized"], ph["fair_after"]
        out[key] = {
            "to_prioritized_s": time_to_settle(rows, p["start_s"], p["end_s"]),
            "to_fair_s": time_to_settle(rows, fa["start_s"], fa["end_s"]),
        }
        fine = (switch_series or {}).get(key)
        if fine:
            hold = round(SWITCH_HOLD_S / SWITCH_SAMPLE_S)
            for name, phase in (("switch_to_prioritized_s", p), ("switch_to_fair_s", fa)):
                out[key][name] = time_to_settle(fine, phase["start_s"], phase["end_s"], hold=hold,
                                                interval_s=SWITCH_SAMPLE_S, slack_s=0.0)  # fmt: skip
    return out
