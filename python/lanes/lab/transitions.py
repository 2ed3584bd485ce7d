"""RUNTIME transition times (thesis 7.1): after the priority change, how long until the high
class holds its prioritised rate; after the change back, how long until it is back at its fair
share. Read from the per-second series of the high flows.

A transition is over at the first second from which the flow stays within TOLERANCE of the
phase's settled rate (the mean of the phase's second half) for HOLD_S seconds in a row. The
answer is in whole report intervals (1 s), counted from the change to the end of that interval."""

from __future__ import annotations

TOLERANCE = 0.10  # of the settled rate
HOLD_S = 3


def settled_mbps(rows: list[dict], a: float, b: float) -> float | None:
    """Mean rate over the second half of [a, b] (the phase after it settled)."""
    mid = a + (b - a) / 2
    v = [r["mbps"] for r in rows if mid < r["t"] <= b + 0.25]
    return sum(v) / len(v) if v else None


def time_to_settle(rows: list[dict], change_s: float, end_s: float, tolerance: float = TOLERANCE,
                   hold: int = HOLD_S) -> float | None:  # fmt: skip
    """Seconds from `change_s` until the series stays within `tolerance` of its settled rate for
    `hold` intervals; None if the phase has no settled rate or never settles."""
    target = settled_mbps(rows, change_s, end_s)
    if not target:
        return None
    after = sorted((r for r in rows if change_s < r["t"] <= end_s + 0.25), key=lambda r: r["t"])
    ok = [abs(r["mbps"] - target) <= tolerance * target for r in after]
    for i in range(len(after) - hold + 1):
        if all(ok[i : i + hold]):
            # the interval ending at after[i]["t"] is the first on target: it began 1 s earlier
            return round(max(0.0, after[i]["t"] - 1.0 - change_s), 3)
    return None


def runtime_transitions(summary: dict, series: dict[str, list[dict]]) -> dict[str, dict[str, float | None]]:
    """Per high flow: {"to_prioritized_s", "to_fair_s"} for a runtime run; {} for other cases."""
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
    return out
