"""The network-aware scheduling section of `lanes lab report`: every nas run's goodput per phase,
the calibrated ceiling, gain, detection and reset, beside the original experiment's numbers.

The original (one UDP run, bottlenecks of 500 and 600 kb/s, the demotion triggered by hand at
about 17 s) measured 800 kb/s before and 1100 kb/s after, +37.5 %; its own theory line for the
baseline was 850 kb/s, and 1100 kb/s is that topology's ceiling (500 + 600). Its chapter-2 example
(A-B 100, B-D 60 Mb/s) is analytic only: 110 Mb/s before, 160 after, +45.5 %.
"""

from __future__ import annotations

import html
import math
import shutil
from pathlib import Path

from lanes.nas.summary import mean_ci

ALG_ORDER = ["nas-off", "nas-manual", "nas-auto", "nas-auto-floor", "nas-inband", "nas-inband-floor"]
# topology -> what the original reported for it, in its units
ORIGINAL = {
    "nas3": "original (500/600 kb/s, UDP, one run, hand trigger at ~17 s): baseline 800 kb/s "
    "(its theory 850), active 1100 kb/s = the ceiling, gain +37.5 % (+29.4 % against its theory); "
    "the victim flow starved to 0",
    "nas-ch2": "original (analytic only): 110 Mb/s before, 160 after = the ceiling, gain +45.5 %",
}
COLUMNS = [
    ("baseline", "baseline Mb/s"),
    ("fair", "analytic Mb/s"),
    ("active", "active Mb/s"),
    ("ceiling", "ceiling Mb/s"),
    ("active_vs_ceiling", "active / ceiling"),
    ("gain", "gain"),
    ("victim_share", "victim share of 1st"),
    ("jain", "Jain active"),
    ("detection_s", "detection s"),
    ("deprioritisations", "demotions"),
    ("feedback_msgs", "feedback msgs"),
    ("false_positives", "false pos."),
    ("reset_s_after_stop", "reset s"),
    ("victim_recovery_s", "back by s"),
    ("stolen_active", "CPU stolen % (active)"),
]


def row(s: dict) -> dict[str, float | None]:
    g = s["goodput_mbps"]
    return {
        "baseline": g["baseline"].get("total"),
        "fair": (s.get("fair_mbps") or {}).get("total"),
        "active": g["active"].get("total"),
        "ceiling": s.get("ceiling_mbps"),
        "active_vs_ceiling": s.get("active_vs_ceiling"),
        "gain": s.get("gain"),
        "victim_share": s.get("victim_share_of_first"),
        "jain": s.get("jain", {}).get("active"),
        **{k: s.get(k) for k in ("detection_s", "deprioritisations", "feedback_msgs", "false_positives",
                                  "reset_s_after_stop", "victim_recovery_s")},
        "stolen_active": (s.get("steal_pct") or {}).get("active"),
    }  # fmt: skip


def _fmt(v: float | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, int):
        return str(v)
    return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"


def _mean_cell(xs: list[float | None]) -> str:
    m = mean_ci([x for x in xs if x is not None])
    if m is None:
        return "–"
    return _fmt(m["mean"]) + (f" ± {_fmt(m['ci95'])}" if m["ci95"] is not None else "")


def section(items: list[tuple[Path, dict]], out: Path) -> tuple[list[str], list[str]]:
    """Markdown lines and HTML parts for the nas runs among a report's runs."""
    groups: dict[tuple, list[tuple[Path, dict]]] = {}
    for r, s in items:
        q = s["params"]
        roles = tuple(q["roles"]) if q.get("roles") else None
        load = q.get("load_pct", 100.0)
        groups.setdefault((q["topo"], q["proto"], q["link_mbps"], roles, load), []).append((r, s))
    md = [
        "# Network-aware scheduling",
        "",
        ("Goodput in Mb/s at the receivers, by phase (`baseline`: every flow, nothing reacts; `active`: "
        "the downstream competitor is back, the mechanism acts). `ceiling`: the two bottlenecks each "
        "with one flow alone, measured at the start of the same run; `analytic`: the shares one FIFO "
        "per port gives in proportion to what each flow sends, from the same calibration; `gain`: "
        "active / baseline of the same run; `CPU stolen`: the share of the machine's CPU time the "
        "hypervisor took in the active phase (a switch it stops loses its ports' line time, so read "
        "a run's goodput against it). Several runs of one algorithm: mean ± 95 % confidence "
        "half-width."),
        "",
    ]
    body: list[str] = []
    head = ["alg", "runs", *(c for _, c in COLUMNS)]
    for (topo, proto, mbps, roles, load), runs in sorted(groups.items(), key=lambda kv: str(kv[0])):
        runs.sort(key=lambda x: (ALG_ORDER.index(a) if (a := x[1]["params"]["alg"]) in ALG_ORDER else 99, a))
        title = f"{topo}, {proto.upper()}, {mbps:g} Mb/s scale" + (f", flows {','.join(roles)}" if roles else "")
        title += f", senders at {load:g} % of their links" if load != 100 else ""
        by_alg: dict[str, list[dict]] = {}
        for _, s in runs:
            by_alg.setdefault(s["params"]["alg"], []).append(row(s))
        rows = [[alg, str(len(rs)), *(_mean_cell([r[k] for r in rs]) for k, _ in COLUMNS)] for alg, rs in by_alg.items()]
        md += [f"## {title}", ""]
        original = topo in ORIGINAL and not roles and load == 100 and proto == "udp"
        if original:
            md += [f"The {ORIGINAL[topo]}.", ""]
        md += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        md += ["| " + " | ".join(r) + " |" for r in rows]
        md.append("")
        body.append(f"<h2>{html.escape(title)}</h2>")
        if original:
            body.append(f"<p>The {html.escape(ORIGINAL[topo])}.</p>")
        h = "".join(f"<th>{html.escape(c)}</th>" for c in head)
        b = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
        body.append(f"<table><tr>{h}</tr>{b}</table>")
        seen: set[str] = set()
        for r, s in runs:  # one goodput plot per algorithm: the first run's
            alg = s["params"]["alg"]
            if alg in seen or not (r / "goodput.png").exists():
                continue
            seen.add(alg)
            dst = f"{topo}_{proto}_{alg}{'_' + '-'.join(roles) if roles else ''}_goodput.png"
            shutil.copyfile(r / "goodput.png", out / dst)
            md += [f"**{alg}** ({r}): ![{dst}]({dst})", ""]
            body.append(f'<h3>{html.escape(alg)}</h3><img src="{dst}" width="640">')
    return md, body
