"""summary.json of a nas run, and the aggregate of repeats.

Goodput of a role in a phase: the mean of its receiver's 1-s iperf intervals that lie wholly in
[phase start + SETTLE_S, phase end] (the first seconds of a phase are the transition: the
detection allowance in `active`). `down` is one role over its two senders. A phase's steal_pct:
the share of the machine's CPU time the hypervisor took over the same window (a switch it stops
loses that time on its ports, and does not make it up).

The analytic baseline is the original's "theory" line computed from this run's own calibration:
both flows at the first bottleneck get shares in proportion to what they offer (one FIFO queue),
the victim carries its share to the second bottleneck and splits that one with `down` the same
way. The ceiling is what the two bottlenecks delivered in `calibrate`, each with one flow alone.
"""

from __future__ import annotations

import json
from pathlib import Path

from lanes.emu.topo import Topology
from lanes.lab import traffic
from lanes.lab.repeats import mean_ci
from lanes.nas.detect import NasConfig
from lanes.nas.plan import NasPlan

SETTLE_S = 2.0
FP_LOSS = 0.01  # a demoted flow that lost less than this at every downstream hop: a false positive
RECOVERED = 0.9  # the victim is back once it has this fraction of its fair share of bottleneck 1


def series(out: Path, pl: NasPlan) -> dict[str, list[tuple[float, float, float]]]:
    """role -> [(start, end, Mb/s)] in run time, from the receivers' logs."""
    by_role: dict[str, list[tuple[float, float, float]]] = {}
    for snd in pl.senders:
        log = out / f"server_{snd.name}.txt"
        ivs = traffic.parse_server(log.read_text(errors="replace")) if log.exists() else []
        role = snd.name.split("-")[0]
        by_role.setdefault(role, []).extend((snd.start_s + iv.start_s, snd.start_s + iv.end_s, iv.mbps) for iv in ivs)
    return {r: sorted(v) for r, v in by_role.items()}


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def jain(xs: list[float]) -> float | None:
    xs = [x for x in xs if x is not None]
    if not xs or sum(xs) == 0:
        return None
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def _sending(pl: NasPlan, role: str, a: float, b: float) -> bool:
    return any(s.name.split("-")[0] == role and s.start_s < b and s.end_s > a for s in pl.senders)


def _trace(out: Path) -> list[dict]:
    path = out / "nas_trace.jsonl"
    if not path.exists():
        return []
    return [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]


def _false_positive(ev: dict, trace: list[dict], cfg: NasConfig) -> bool:
    """Did the flow lose less than FP_LOSS at every downstream hop in the polls that led to it?"""
    window = [r for r in trace if ev["t"] - cfg.windows * cfg.poll_s - 0.05 <= r["t"] <= ev["t"] + 0.01]
    downstream = [x for r in window for x in r["loss"].get(ev["flow"], [])[1:] if x is not None]
    return not downstream or max(downstream) < FP_LOSS


def renewal(ev: dict, events: list[dict], hold_s: float) -> bool:
    """Is this demotion a renewal: within a hold time of the same flow's restore at the same
    switch? In band, a demoted flow can be starved upstream so that the downstream port, with
    the competitor alone under its busy mark, forgets it; feedback stops, the hold lapses, and
    the flow's first loss downstream on its return demotes it again within a window. That is
    the same detection going on, not a new one, and the polls before it hold no downstream loss
    of the starved flow to judge it by, so false positives count only detections."""
    return any(r["kind"] == "restore" and r["flow"] == ev["flow"] and r["switch"] == ev["switch"]
               and 0 <= ev["t"] - r["t"] < hold_s for r in events)  # fmt: skip


def _max_changes(events: list[dict], hold: float) -> int:
    most = 0
    for flow in {e["flow"] for e in events}:
        ts = sorted(e["t"] for e in events if e["flow"] == flow)
        for i, t in enumerate(ts):
            most = max(most, sum(1 for u in ts[i:] if u < t + hold - 1e-9))
    return most


def _fair(offered: dict[str, float], cap1: float | None, cap2: float | None) -> dict | None:
    need = ("victim", "up", "down")
    if cap1 is None or cap2 is None or any(r not in offered for r in need):
        return None
    ov, ou, od = (offered[r] for r in need)
    v1 = cap1 * ov / (ov + ou) if ov + ou > cap1 else ov
    u = min(ou, cap1 - v1)
    v2, d = (cap2 * v1 / (v1 + od), cap2 * od / (v1 + od)) if v1 + od > cap2 else (v1, od)
    return {"victim": v2, "up": u, "down": d, "total": v2 + u + d, "victim_at_first": v1}


def steal_pct(cpu: list, start_s: float, end_s: float) -> float | None:
    """The share (%) of the machine's CPU time the hypervisor took between the samples nearest
    to start_s and end_s ((t, stolen, total) jiffies each), or None without two samples."""
    if not cpu:
        return None
    a = min(cpu, key=lambda c: abs(c[0] - start_s))
    b = min(cpu, key=lambda c: abs(c[0] - end_s))
    return round(100 * (b[1] - a[1]) / (b[2] - a[2]), 2) if b[2] > a[2] else None


def summarize(p: object, topo: Topology, pl: NasPlan, cfg: NasConfig, result: dict) -> dict:
    out: Path = p.out  # type: ignore[attr-defined]
    ser = series(out, pl)
    goodput: dict[str, dict[str, float | None]] = {}
    for ph in pl.phases:
        row: dict[str, float | None] = {}
        for role, ivs in ser.items():
            if not _sending(pl, role, ph.start_s, ph.end_s):
                continue
            row[role] = _mean([m for a, b, m in ivs if a >= ph.start_s + SETTLE_S - 1e-6 and b <= ph.end_s + 1e-6])
        row["total"] = sum(v for v in row.values() if v is not None)
        goodput[ph.name] = row
    steal = {ph.name: steal_pct(result.get("cpu", []), ph.start_s + SETTLE_S, ph.end_s) for ph in pl.phases}
    cal = goodput["calibrate"]
    cap1, cap2 = cal.get("up"), cal.get("down")
    ceiling = (cap1 + cap2) if cap1 is not None and cap2 is not None else None
    offered = {name.split("-")[0]: m for name, m in result["offered_mbps"].items()}
    fair = _fair(offered, cap1, cap2)
    events = result["events"]
    trace = _trace(out)
    demotes = [e for e in events if e["kind"] == "demote"]
    victim = next((f.key for f in topo.flows if f.cls == "victim"), None)
    first = next((e for e in demotes if e["flow"] == victim and e["t"] >= pl.onset_s), None)
    restore = next((e for e in events if e["kind"] == "restore" and e["t"] >= pl.reset_s), None)
    base, act = goodput["baseline"], goodput["active"]
    recovery = None
    if fair is not None and restore is not None:
        back = [b for a, b, m in ser.get("victim", []) if a >= pl.reset_s and m >= RECOVERED * fair["victim_at_first"]]
        recovery = round(back[0] - pl.reset_s, 2) if back else None

    def ratio(a: float | None, b: float | None) -> float | None:
        return round(a / b, 4) if a is not None and b else None

    return {
        "kind": "nas",
        "params": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(p).items()},
        "scheduler": pl.scheduler, "control": pl.control, "mode": pl.mode,
        "config": vars(cfg),
        "phases": [{"name": ph.name, "start_s": ph.start_s, "end_s": ph.end_s} for ph in pl.phases],
        "onset_s": pl.onset_s, "reset_s": pl.reset_s, "settle_s": SETTLE_S,
        "flows": {f.cls: {"key": f.key} for f in topo.flows},
        "offered_mbps": offered,
        "goodput_mbps": goodput,
        "steal_pct": steal,
        "ceiling_mbps": ceiling,
        "fair_mbps": fair,
        "baseline_vs_fair": ratio(base.get("total"), fair and fair["total"]),
        "active_vs_ceiling": ratio(act.get("total"), ceiling),
        "gain": ratio(act.get("total"), base.get("total")),
        "ceiling_gain": ratio(ceiling, fair and fair["total"]),
        "jain": {ph: jain([v for k, v in row.items() if k != "total"]) for ph, row in goodput.items()},
        "victim_share_of_first": ratio(act.get("victim"), cap1),
        "events": events,
        "deprioritisations": len(demotes),
        "feedback_msgs": result["feedback_msgs"],
        # in band: what the data plane sent before the hold time switched it on (no effect)
        "feedback_before_arm": result.get("feedback_before_arm"),
        "state_changes": len(events),
        "renewals": sum(1 for e in demotes if renewal(e, events, cfg.hold_s)),
        "false_positives": sum(1 for e in demotes if not renewal(e, events, cfg.hold_s)
                               and _false_positive(e, trace, cfg)),  # fmt: skip
        "detection_s": round(first["t"] - pl.onset_s, 3) if first else None,
        "demoted_applied_s": round(first["applied_t"] - pl.onset_s, 3) if first else None,
        "reset_s_after_stop": round(restore["t"] - pl.reset_s, 3) if restore else None,
        "victim_recovery_s": recovery,
        "max_changes_per_hold": _max_changes(events, cfg.hold_s),
        "polls": result["polls"],
        "setup_writes": result.get("setup_writes"),
        "writes_after_setup": result.get("writes_after_setup"),
        "series": {r: [[a, b, m] for a, b, m in v] for r, v in ser.items()},
    }  # fmt: skip


AGGREGATED = ["baseline_vs_fair", "active_vs_ceiling", "gain", "ceiling_gain", "detection_s",
              "deprioritisations", "feedback_msgs", "false_positives", "state_changes",
              "reset_s_after_stop", "victim_recovery_s", "victim_share_of_first", "max_changes_per_hold"]  # fmt: skip


def aggregate(runs: list[dict]) -> dict:
    out: dict = {"n": len(runs), "params": runs[0]["params"]}
    for k in AGGREGATED:
        out[k] = mean_ci([r.get(k) for r in runs])
    for ph in runs[0]["goodput_mbps"]:
        out.setdefault("goodput_mbps", {})[ph] = {
            role: mean_ci([r["goodput_mbps"][ph].get(role) for r in runs]) for role in runs[0]["goodput_mbps"][ph]
        }
    out["jain_active"] = mean_ci([r["jain"].get("active") for r in runs])
    out["runs"] = [{k: r.get(k) for k in AGGREGATED} for r in runs]
    return out
