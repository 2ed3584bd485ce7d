"""`lanes lab report`: runs side by side in Markdown and HTML, the thesis's published numbers
next to ours where it has them ("ours (thesis X)"), with each run's plots."""

from __future__ import annotations

import html
import json
import shutil
from collections.abc import Callable
from pathlib import Path

from lanes import atomic
from lanes.errors import LanesError
from lanes.lab.thesis import PUBLISHED, THESIS_LINK_MBPS, control_writes

MAIN_PHASE = {"proactive": "high_present", "runtime": "prioritized", "mpi": "mpi"}
ALG_ORDER = ["no", "fifo", "strict", "rlsp-drr", "rlsp-drr-borrow", "drr", "linux-htb"]
COLUMNS = [
    ("high_mbps", "high Mb/s"),
    ("high_share_pct", "high share %"),
    ("low_mbps", "med/low Mb/s"),
    ("high_loss_pct", "high loss %"),
    ("low_loss_pct", "med/low loss %"),
    ("idle_owd_ms", "idle OWD ms"),
    ("high_owd_ms", "high OWD ms"),
    ("low_owd_ms", "med/low OWD ms"),
    ("mpi_1024_ms", "MPI 1 KiB ms"),
    ("mpi_16384_ms", "MPI 16 KiB ms"),
    ("port_use_pct", "port use %"),
    ("control_writes", "writes"),
    ("switch_cpu_pct", "switch CPU %"),
    ("to_prioritized_s", "s to prio"),  # runtime: after the change, until the high class holds its rate
    ("to_fair_s", "s to fair"),  # runtime: after the change back, until it holds its fair share
    ("switch_to_prioritized_s", "s to prio (switch)"),  # the same at 0.25 s, from the switch's counters
    ("switch_to_fair_s", "s to fair (switch)"),
]


def find_runs(paths: list[Path]) -> list[Path]:
    runs: list[Path] = []
    for p in paths:
        if (p / "summary.json").is_file():
            runs.append(p)
        elif p.is_dir():
            runs += sorted(q.parent for q in p.rglob("summary.json"))
        else:
            raise LanesError(f"{p}: no such run directory")
    if not runs:
        raise LanesError("no summary.json found in the given directories")
    return runs


def _mean(v: list[float]) -> float | None:
    return sum(v) / len(v) if v else None


def metrics(s: dict) -> dict[str, float | None]:
    phase = MAIN_PHASE.get(s["params"]["case"], s["phases"][-1]["name"])
    by: dict[str, list[dict]] = {"high": [], "low": []}
    for f in s["flows"].values():
        st = f["phases"].get(phase)
        if st:
            by["high" if f["class"] == "high" else "low"].append(st)
    m: dict[str, float | None] = {}
    for cls, sts in by.items():
        for key, col in (("throughput_mbps", "mbps"), ("loss_pct", "loss_pct"), ("owd_ms", "owd_ms"),
                         ("share_pct", "share_pct")):  # fmt: skip
            m[f"{cls}_{col}"] = _mean([x[key] for x in sts if x.get(key) is not None])
    idle = list(s.get("idle_owd_ms", {}).values())
    m["idle_owd_ms"] = _mean(idle)
    lat = s.get("mpi", {}).get("latency_us", {})
    m["mpi_1024_ms"] = lat["1024"] / 1000 if "1024" in lat else None
    m["mpi_16384_ms"] = lat["16384"] / 1000 if "16384" in lat else None
    m["control_writes"] = s.get("control_writes")
    uses = [
        v["share"] for v in s.get("validity", {}).get("ports", {}).get(phase, {}).values() if v.get("share")
    ]
    m["port_use_pct"] = 100 * min(uses) if uses else None
    cpus = [v["mean"] for k, v in s.get("cpu_pct", {}).items() if k != "system_pct" and v]
    m["switch_cpu_pct"] = max(cpus) if cpus else None
    tr = list((s.get("transitions") or {}).values())
    for k in ("to_prioritized_s", "to_fair_s", "switch_to_prioritized_s", "switch_to_fair_s"):
        v = [x[k] for x in tr if x.get(k) is not None]
        m[k] = _mean(v)
    return m


def _fmt(v: float | None) -> str:
    if v is None:
        return "–"
    if isinstance(v, int) or float(v).is_integer() and abs(v) >= 10:
        return f"{v:.0f}"
    return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"


def _cell(ours: float | None, thesis: float | None) -> str:
    return _fmt(ours) + (f" ({_fmt(thesis)})" if thesis is not None else "")


def _n_vswitches(topo: str) -> int:
    return {"star": 1, "tree1": 2, "tree2": 4}.get(topo, 1)


# Writes the report's section on runs of another kind (summary.json's "kind", e.g. nas): given
# those runs and the report directory, its Markdown lines and HTML parts. The caller passes them,
# so the lab does not import the parts that build on it.
SectionWriter = Callable[[list[tuple[Path, dict]], Path], tuple[list[str], list[str]]]


def report(paths: list[Path], out: Path, other_kinds: dict[str, SectionWriter] | None = None) -> Path:
    other_kinds = other_kinds or {}
    runs = find_runs(paths)
    out.mkdir(parents=True, exist_ok=True)
    groups: dict[tuple, list[tuple[Path, dict]]] = {}
    others: dict[str, list[tuple[Path, dict]]] = {}
    for r in runs:
        s = json.loads((r / "summary.json").read_text())
        kind = s.get("kind")
        if kind is not None:
            if kind not in other_kinds:
                raise LanesError(f"{r}: a '{kind}' run, which this report cannot show")
            others.setdefault(kind, []).append((r, s))
            continue
        q = s["params"]
        load = ""
        if q["proto"] == "udp" and (q.get("high_load_pct", 50), q.get("low_load_pct", 50)) != (50, 50):
            load = f"UDP load high {q['high_load_pct']:g} %, others {q['low_load_pct']:g} %"
        if q.get("queue_depth", 64) != 64:
            load += f"{', ' if load else ''}queues of {q['queue_depth']} packets"
        groups.setdefault((q["topo"], q["case"], q["proto"], q["link_mbps"], load), []).append((r, s))
    intro = (
        "Values are ours; in parentheses the thesis's published figure for the same topology, case, "
        "protocol and algorithm (thesis link rates: star 100, tree1 50, tree2 10 Mb/s). The metrics "
        "are taken in the phase where the high class is present (proactive: high_present, runtime: "
        "prioritized, mpi: mpi). `writes` counts control-plane writes after set-up (thesis 7.4 in "
        "parentheses). `valid`: whether the congested port delivered at least 95 % of its capacity "
        "while backlogged, the senders sent at least 95 % of their rate and the hypervisor stole at "
        "most 2 % of the CPU (lanes.lab.validity)."
    )
    md = ["# lanes lab report", "", intro, ""] if groups else ["# lanes lab report", ""]
    body_html = []
    for (topo, case, proto, mbps, load), items in sorted(groups.items()):
        items.sort(key=lambda x: (ALG_ORDER.index(a) if (a := x[1]["params"]["alg"]) in ALG_ORDER else 99, a))
        title = f"{topo}, {case}, {proto.upper()}, {mbps:g} Mb/s links"
        if THESIS_LINK_MBPS.get(topo) not in (None, mbps):
            title += f" (thesis: {THESIS_LINK_MBPS[topo]} Mb/s)"
        if load:
            title += f"; {load}"
        head = ["alg", *(c for _, c in COLUMNS), "valid"]
        rows = []
        notes = []
        for _, s in items:
            alg = s["params"]["alg"]
            pub = dict(PUBLISHED.get((topo, case, proto, alg), {})) if not load else {}
            if THESIS_LINK_MBPS.get(topo) != mbps:  # rates and delays scale with the link
                pub = {k: v for k, v in pub.items() if k.endswith("_pct")}
            w = control_writes(case, alg, _n_vswitches(topo)) if alg != "linux-htb" else None
            if w is not None:
                pub["control_writes"] = w
            m = metrics(s)
            warnings = s.get("validity", {}).get("warnings", [])
            valid = "–" if "validity" not in s else ("yes" if not warnings else f"NO ({len(warnings)})")
            rows.append([alg, *(_cell(m.get(k), pub.get(k)) for k, _ in COLUMNS), valid])
            notes += [f"{alg}: {w}" for w in warnings]
        md += [f"## {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        md += ["| " + " | ".join(r) + " |" for r in rows]
        md.append("")
        if notes:
            md += ["**Not valid** (the numbers above are what was measured, under these conditions):", ""]
            md += [f"- {n}" for n in notes]
            md.append("")
        body_html.append(f"<h2>{html.escape(title)}</h2>" + _html_table(head, rows))
        if notes:
            body_html.append("<p><b>Not valid</b> (the numbers above are what was measured, under these "
                             "conditions):</p><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes)
                             + "</ul>")  # fmt: skip
        for r, s in items:
            name = f"{topo}_{case}_{proto}_{s['params']['alg']}"
            imgs = []
            for png in ("bandwidth.png", "loss.png", "latency.png", "mpi.png"):
                if (r / png).exists():
                    dst = f"{name}_{png}"
                    shutil.copyfile(r / png, out / dst)
                    imgs.append(dst)
            if imgs:
                md.append(f"**{s['params']['alg']}** ({r}): " + " ".join(f"![{i}]({i})" for i in imgs))
                md.append("")
                body_html.append(f"<h3>{html.escape(s['params']['alg'])}</h3>"
                                 + "".join(f'<img src="{i}" width="480">' for i in imgs))  # fmt: skip
    for kind, kind_runs in others.items():
        kind_md, kind_html = other_kinds[kind](kind_runs, out)
        md += kind_md
        body_html += kind_html
    atomic.write_text(out / "report.md", "\n".join(md) + "\n")
    atomic.write_text(
        out / "report.html",
        "<!doctype html><html><head><meta charset='utf-8'><title>lanes lab report</title>"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #aaa;padding:3px 8px;text-align:right}td:first-child{text-align:left}"
        "</style></head><body><h1>lanes lab report</h1>"
        + (f"<p>{html.escape(intro)}</p>" if groups else "") + "".join(body_html) + "</body></html>\n"
    )
    print(f"lab report: {len(runs)} run(s) -> {out}/report.md, {out}/report.html")
    return out


def _html_table(head: list[str], rows: list[list[str]]) -> str:
    h = "".join(f"<th>{html.escape(c)}</th>" for c in head)
    b = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{h}</tr>{b}</table>"
