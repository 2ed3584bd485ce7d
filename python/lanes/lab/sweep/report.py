"""The sweep's report: sweep.csv (one row per cell, mean and 95 % CI), mpi_sizes.csv, compare.csv,
figures, and report.md/report.html with a table per thesis section (7.1 RUNTIME, 7.2 PROACTIVE,
7.3 MPI, 7.4 control-plane writes) and one for the paper's evaluation: the published value,
ours, whether the set-up was the same, and a verdict."""

from __future__ import annotations

import html
from pathlib import Path

from lanes import atomic
from lanes.emu.topo import TOPOLOGIES
from lanes.lab.cases import CASES
from lanes.lab.csvout import write_csv, write_run_csvs
from lanes.lab.mpi import SIZES
from lanes.lab.sweep.machines import machines_table, mark
from lanes.lab.sweep.matrix import ALGS
from lanes.lab.sweep.plots import mpi_curves, throughput_grid
from lanes.lab.sweep.stats import cell_row, write_mpi_csv, write_sweep_csv
from lanes.lab.thesis import (
    ALWAYS_DIFFERS,
    FALLING_END,
    PAPER,
    PAPER_LINK_MBPS,
    PEAK,
    PUBLISHED,
    THESIS_LINK_MBPS,
    TRANSITIONS,
    control_writes,
    kind_of,
)
from lanes.lab.traffic import PROTOCOLS

SECTIONS = [("runtime", "7.1 RUNTIME"), ("proactive", "7.2 PROACTIVE"), ("mpi", "7.3 MPI")]
# The thesis's runs (6.2): iperf -t 180 in both cases, the change at 90 s (RUNTIME: prioritisation on
# at 90 s, off again at 180 s, the end of its run). Our RUNTIME adds a third 90-s phase back at the
# fair share, hence 270 s.
THESIS_DURATION_S = {"runtime": 180.0, "proactive": 180.0, "mpi": 180.0}
THESIS_MPI_ITERS = 100
PCT_TOL = 3.0  # loss and shares, percentage points, where the thesis's number is not 0
ZERO_PCT_TOL = 0.1  # a published 0 % agrees only with this little
REL_TOL = 0.10  # throughput
LAT_FACTOR = 1.5  # latencies and times: within x1.5 either way, no absolute band
TINY = {"_ms": 1.0, "_s": 1.0}  # both under this: "both under 1 ms" (or 1 s), its own verdict
LABELS = {
    "high_mbps": "high Mb/s", "low_mbps": "med/low Mb/s", "high_loss_pct": "high loss %",
    "low_loss_pct": "med/low loss %", "high_owd_ms": "high OWD ms", "low_owd_ms": "med/low OWD ms",
    "mpi_1024_ms": "MPI 1 KiB ms", "mpi_16384_ms": "MPI 16 KiB ms", "control_writes": "writes after set-up",
    "to_prioritized_s": "s to prioritised", "to_fair_s": "s back to fair",
    "switch_to_prioritized_s": "s to prioritised (switch, 0.25 s)", "switch_to_fair_s": "s back to fair (switch, 0.25 s)",
}  # fmt: skip
KIND_NOTE = {PEAK: " (peak)", FALLING_END: " (series end)"}
NOT_COMPARABLE_PEAK = "not comparable (thesis: a per-second peak; ours: a phase mean)"
NOT_COMPARABLE_END = "not comparable (thesis: the end of a falling per-second series; ours: a phase mean)"
NOT_COMPARABLE_RATE = "not comparable (link rate)"
WHY = {NOT_COMPARABLE_PEAK: "a per-second peak", NOT_COMPARABLE_END: "the end of a falling series",
       NOT_COMPARABLE_RATE: "at another link rate"}  # fmt: skip


def verdict(metric: str, ours: float | None, theirs: float | None, kind: str = "mean") -> str:
    """'agrees', 'both under X', 'not comparable (...)', or which way ours differs and by how much;
    '–' when either is missing. kind: what the published number is (lanes.lab.thesis.KINDS)."""
    if ours is None or theirs is None:
        return "–"
    if metric == "control_writes":
        return "matches the formula" if round(ours) == round(theirs) else f"differs ({ours:g} vs {theirs:g})"
    d = ours - theirs
    if kind == PEAK:  # the thesis's mean is at most `theirs`: only "higher" can be told, for times
        above = metric.endswith(("_ms", "_s")) and theirs > 0 and ours > LAT_FACTOR * theirs
        return f"ours higher (x{ours / theirs:.2g}, above its series' peak)" if above else NOT_COMPARABLE_PEAK
    if metric.endswith("_pct"):
        tol = ZERO_PCT_TOL if theirs == 0 else PCT_TOL
        return "agrees" if abs(d) <= tol else f"ours {'higher' if d > 0 else 'lower'} ({d:+.3g} pp)"
    if metric.endswith("_mbps"):
        if abs(d) <= REL_TOL * abs(theirs):
            return "agrees"
        return f"ours {'higher' if d > 0 else 'lower'} ({100 * d / theirs:+.0f} %)" if theirs else "differs"
    tiny = next((v for k, v in TINY.items() if metric.endswith(k)), 0.0)
    unit = "ms" if metric.endswith("_ms") else "s"
    if ours < tiny and theirs < tiny:
        return f"both under {tiny:g} {unit}"
    # a 0 of ours is told as the gap: "x0" would hide how far apart the two are
    ratio = f"x{ours / theirs:.2g}" if theirs > 0 and ours > 0 else f"{d:+.3g} {unit}"
    if kind == FALLING_END:  # the thesis's mean is at least `theirs`: only "lower" can be told
        return f"ours lower ({ratio}, below where its series ends)" if ours * LAT_FACTOR < theirs else NOT_COMPARABLE_END
    if theirs > 0 and ours > 0 and 1 / LAT_FACTOR <= ours / theirs <= LAT_FACTOR:
        return "agrees"
    return f"ours {'higher' if d > 0 else 'lower'} ({ratio})"


def setup_diff(row: dict, link_mbps: float | None, duration_s: float | None, iters: int | None) -> list[str]:
    """How this cell's set-up differs from the publication's (empty: the same)."""
    diff = []
    if link_mbps is not None and abs(row["link_mbps"] - link_mbps) > 1e-9:
        diff.append(f"{row['link_mbps']:g} vs {link_mbps:g} Mb/s")
    if duration_s is not None and row["case"] != "mpi" and abs(row["duration_s"] - duration_s) > 1e-9:
        diff.append(f"{row['duration_s']:g} vs {duration_s:g} s")
    if iters is not None and row["case"] == "mpi" and row["mpi_iters"] != iters:
        diff.append(f"{row['mpi_iters']} vs {iters} round trips per size")
    return diff


def _ours(row: dict, k: str) -> tuple[float | None, str]:
    m = row.get(k)
    if not m:
        return None, "–"
    if m["ci95"] is not None:
        txt = f"{_fmt(m['mean'])} ± {_fmt(m['ci95'])}"
    else:  # a single run has no spread to show; say so rather than let the number stand for the cell
        txt = _fmt(m["mean"]) + (" (one run)" if m.get("n") == 1 else "")
    return m["mean"], txt


def _fmt(v: float | None) -> str:
    if v is None:
        return "–"
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}"


def compare_rows(rows: list[dict]) -> list[dict]:
    """One line per (cell, metric) with a published value: thesis sections and the paper."""
    out = []
    for r in rows:
        key = (r["topo"], r["case"], r["proto"], r["alg"])
        pub: dict[str, float] = dict(PUBLISHED.get(key, {})) | dict(TRANSITIONS.get(key, {}))
        w = control_writes(r["case"], r["alg"], {"star": 1, "tree1": 2, "tree2": 4}[r["topo"]])
        if w is not None:
            pub["control_writes"] = w
        diff = setup_diff(r, THESIS_LINK_MBPS.get(r["topo"]), THESIS_DURATION_S[r["case"]], THESIS_MPI_ITERS)
        section = dict(SECTIONS)[r["case"]]
        for k, theirs in pub.items():
            if k == "control_writes":  # a formula of N and M (thesis 7.4): rates, time and machine do not enter
                out.append(_line("formula", "7.4 control-plane writes", r, k, theirs, None, "mean"))
            else:
                out.append(_line("thesis", section, r, k, theirs, diff, kind_of(key, k)))
        if key in PAPER:
            pdiff = setup_diff(r, PAPER_LINK_MBPS, THESIS_DURATION_S[r["case"]], THESIS_MPI_ITERS)
            for k, theirs in PAPER[key].items():
                out.append(_line("paper", "Conference paper evaluation", r, k, theirs, pdiff, "mean"))
    return out


def _line(source: str, section: str, r: dict, k: str, theirs: float, diff: list[str] | None, kd: str) -> dict:
    """diff None: a formula's number, no set-up to compare."""
    ours, txt = _ours(r, k)
    rate_bound = k.endswith(("_mbps", "_ms"))  # absolute rates and delays scale with the link rate
    comparable = not (rate_bound and any("Mb/s" in d for d in diff or []))
    return {
        "source": source, "section": section, "topo": r["topo"], "case": r["case"], "proto": r["proto"],
        "alg": r["alg"], "metric": k, "published": theirs, "ours": ours, "ours_text": txt, "kind": kd,
        "same_setup": "n/a (a formula of N and M)" if diff is None else "no: " + "; ".join(diff + ALWAYS_DIFFERS),
        "verdict": verdict(k, ours, theirs, kd) if comparable else NOT_COMPARABLE_RATE,
        "valid": f"{r['valid_runs']}/{r['n']}", "load1": r.get("load1"),
    }  # fmt: skip


def _table(lines: list[dict]) -> tuple[list[str], list[list[str]]]:
    head = ["topo", "case", "proto", "alg", "metric", "published", "ours", "same set-up", "verdict", "valid runs",
            "load"]  # fmt: skip
    body = [[x["topo"], x["case"], x["proto"].upper(), x["alg"], LABELS.get(x["metric"], x["metric"]),
             _fmt(x["published"]) + KIND_NOTE.get(x["kind"], ""),
             x["ours_text"], x["same_setup"], x["verdict"], x["valid"], _fmt(x["load1"])] for x in lines]  # fmt: skip
    return head, body


def write_all(out: Path, cells: list, repeats: int, preset: object, report_dir: Path | None = None,
              across_machines: bool = False) -> Path:
    rep = report_dir or out / "report"
    (rep / "figures").mkdir(parents=True, exist_ok=True)
    names, rows = set(), []
    for c in cells:
        if c.name in names:
            continue
        names.add(c.name)
        row = cell_row(out, c)
        if row is not None:
            rows.append(row)
            for run in row["runs"]:
                if not (Path(run) / "series.csv").exists():
                    write_run_csvs(Path(run))
    write_sweep_csv(rep / "sweep.csv", rows)
    _concat_csv(rep / "flows.csv", [Path(r["runs"][0]) / "summary.csv" for r in rows])
    write_mpi_csv(rep / "mpi_sizes.csv", rows)
    notes = mark(rows, across_machines)  # after the CSVs: they keep every cell's numbers
    comp = compare_rows(rows)
    write_compare_csv(rep / "compare.csv", comp)
    figs = _figures(rows, rep / "figures")
    _write_docs(rep, rows, comp, figs, len(names), getattr(preset, "name", "?"), notes)
    print(f"sweep report: {len(rows)} of {len(names)} cells -> {rep}/report.md, {rep}/report.html")
    return rep


def write_compare_csv(path: Path, comp: list[dict]) -> None:
    keys = ["source", "section", "topo", "case", "proto", "alg", "metric", "published", "kind", "ours", "same_setup", "verdict",
            "valid", "load1"]  # fmt: skip
    write_csv(path, keys, [[x[k] for k in keys] for x in comp])


def verdict_class(v: str) -> str:
    """The verdict's class for counting: agrees, both under, lower, higher, not comparable, formula, missing."""
    for prefix, cls in [("agrees", "agrees"), ("both under", "both under"), ("ours lower", "lower"),
                        ("ours higher", "higher"), ("not comparable", "not comparable"), ("–", "missing")]:  # fmt: skip
        if v.startswith(prefix):
            return cls
    return "differs"


def verdict_counts(comp: list[dict]) -> list[str]:
    """The headline: measured numbers by verdict, apart from the write counts of the thesis's formula."""
    measured = [x for x in comp if x["source"] != "formula"]
    formula = [x for x in comp if x["source"] == "formula"]
    out = []
    if measured:
        by: dict[str, int] = {}
        for x in measured:
            by[verdict_class(x["verdict"])] = by.get(verdict_class(x["verdict"]), 0) + 1
        nc = [x["verdict"] for x in measured if verdict_class(x["verdict"]) == "not comparable"]
        why = {v: nc.count(v) for v in dict.fromkeys(nc)}
        n_th, n_pa = sum(x["source"] == "thesis" for x in measured), sum(x["source"] == "paper" for x in measured)
        out.append(
            f"Measured numbers: {len(measured)} published numbers ({n_th} of the thesis, {n_pa} of the paper) "
            f"beside ours: {by.get('agrees', 0)} agree, {by.get('both under', 0)} both under 1 ms (or 1 s), "
            f"{by.get('lower', 0)} with ours lower, {by.get('higher', 0)} with ours higher, "
            f"{by.get('not comparable', 0)} not comparable"
            + (" (" + ", ".join(f"{n} {WHY.get(v, v)}" for v, n in why.items()) + ")" if why else "")
            + (f", {by['missing']} not measured" if by.get("missing") else "") + "."
        )  # fmt: skip
    if formula:
        ok = sum(x["verdict"].startswith("matches") for x in formula)
        out.append(f"Write counts (thesis 7.4, a formula of N and M, not a measurement): {ok} of {len(formula)} "
                   "counted writes match it.")  # fmt: skip
    return out


def _concat_csv(path: Path, parts: list[Path]) -> None:
    """One CSV of the cells' per-flow, per-phase rows (their summary.csv files share a header)."""
    lines: list[str] = []
    for part in parts:
        if part.exists():
            body = part.read_text().splitlines()
            lines += body if not lines else body[1:]
    path.write_text("\n".join(lines) + "\n" if lines else "")


def _figures(rows: list[dict], d: Path) -> list[tuple[str, Path]]:
    figs = []
    for topo in TOPOLOGIES:
        for case in CASES:
            f = throughput_grid(rows, topo, case, ALGS, PROTOCOLS, d / f"{topo}_{case}_throughput.png")
            if f:
                figs.append((f"{topo} {case}: throughput over time", f))
        f = mpi_curves(rows, topo, ALGS, PROTOCOLS, d / f"{topo}_mpi_latency.png")
        if f:
            figs.append((f"{topo}: MPI latency vs message size", f))
    return figs


def _m(rows: list[dict], case: str, alg: str, k: str) -> float | None:
    r = next((r for r in rows if (r["topo"], r["case"], r["proto"], r["alg"]) == ("tree2", case, "udp", alg)), None)
    return (r.get(k) or {}).get("mean") if r else None


def _sizes(rows: list[dict], alg: str) -> dict[str, float]:
    r = next((r for r in rows if (r["topo"], r["case"], r["proto"], r["alg"]) == ("tree2", "mpi", "udp", alg)), None)
    return {n: v["latency_us"]["mean"] for n, v in (r or {}).get("mpi", {}).items() if v.get("latency_us")}


def paper_claims(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    """The conference paper's qualitative results on tree2/UDP, each checked against our numbers."""
    body = []
    hi, lo = _m(rows, "proactive", "no", "high_mbps"), _m(rows, "proactive", "no", "low_mbps")
    if hi is not None and lo is not None:
        body.append(["NO: the high class gets no larger share when it appears", f"high {_fmt(hi)}, others {_fmt(lo)} Mb/s",
                     "holds" if hi <= 1.1 * lo else "does not hold"])  # fmt: skip
    s, d = _m(rows, "proactive", "strict", "low_mbps"), _m(rows, "proactive", "rlsp-drr", "low_mbps")
    if s is not None and d is not None:
        body.append(["RL-SP-DRR uses the link slightly better for the lower classes than STRICT",
                     f"rlsp-drr {_fmt(d)}, strict {_fmt(s)} Mb/s", "holds" if d > s else "does not hold"])  # fmt: skip
    no, st, dr = _sizes(rows, "no"), _sizes(rows, "strict"), _sizes(rows, "rlsp-drr")
    mpi_rows = [r for r in rows if (r["topo"], r["case"], r["proto"]) == ("tree2", "mpi", "udp")]
    withheld = next((r["latency_withheld"] for r in mpi_rows if r.get("latency_withheld")), "")
    if withheld:
        body.append(["MPI: latencies of STRICT, RL-SP-DRR and NO", "–", f"not compared: {withheld}"])
        no = st = dr = {}
    common = [n for n in no if n in st and n in dr]
    if common:
        below = [n for n in common if st[n] < no[n] and dr[n] < no[n]]
        cut = "" if len(common) == SIZES else f" ({SIZES - len(common)} not measured in all three: ping-pong cut off)"
        body.append(["MPI: STRICT and RL-SP-DRR below NO at every message size",
                     f"{len(below)} of {len(common)} sizes{cut}", "holds" if len(below) == len(common) else "does not hold"])  # fmt: skip
    if "16384" in st and "16384" in dr:
        body.append(["MPI: STRICT below RL-SP-DRR (16 KiB: 51 ms vs 2.6 s)",
                     f"strict {_fmt(st['16384'] / 1000)}, rlsp-drr {_fmt(dr['16384'] / 1000)} ms",
                     "holds" if st["16384"] < dr["16384"] else "does not hold"])  # fmt: skip
    rates = sorted({r["link_mbps"] for r in rows if (r["topo"], r["proto"]) == ("tree2", "udp")})
    return ["The conference paper says", f"ours (tree2, {'/'.join(f'{x:g}' for x in rates)} Mb/s, UDP)", "verdict"], body


def _transition_table(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    head = ["topo", "proto", "alg", "s to prioritised", "s back to fair", "switch: s to prioritised",
            "switch: s back to fair", "thesis"]  # fmt: skip
    body = []
    for r in rows:
        if r["case"] != "runtime":
            continue
        th = TRANSITIONS.get((r["topo"], r["case"], r["proto"], r["alg"]), {}).get("to_prioritized_s")
        if r["alg"] == "no":  # best effort: no change is made, there is nothing to settle after
            body.append([r["topo"], r["proto"].upper(), r["alg"], "no change", "no change", "no change", "no change", "–"])
            continue
        body.append([r["topo"], r["proto"].upper(), r["alg"], _ours(r, "to_prioritized_s")[1],
                     _ours(r, "to_fair_s")[1], _ours(r, "switch_to_prioritized_s")[1],
                     _ours(r, "switch_to_fair_s")[1], "–" if th is None else f"{th:g} s to prioritised"])  # fmt: skip
    return head, body


def _mpi_table(rows: list[dict], topo: str, proto: str) -> tuple[list[str], list[list[str]]]:
    cells = {r["alg"]: r for r in rows if (r["topo"], r["case"], r["proto"]) == (topo, "mpi", proto)}
    withheld = next((r["latency_withheld"] for r in cells.values() if r.get("latency_withheld")), "")
    if withheld and len(cells) > 1:  # side by side is a comparison: not across machine kinds
        return ["bytes", "not compared"], [["–", withheld + " (--compare-across-machines to compare)"]]
    algs = [a for a in ALGS if a in cells]
    sizes = sorted({n for r in cells.values() for n in r.get("mpi", {})}, key=int)
    head = ["bytes", *(f"{a} ms" for a in algs), *(f"{a} idle ms" for a in algs)]
    body = []
    for n in sizes:
        v = [cells[a]["mpi"].get(n, {}) for a in algs]
        body.append([n, *(_fmt(x["latency_us"]["mean"] / 1000) if x.get("latency_us") else "–" for x in v),
                     *(_fmt(x["idle_latency_us"]["mean"] / 1000) if x.get("idle_latency_us") else "–" for x in v)])  # fmt: skip
    return head, body


def _write_docs(rep: Path, rows: list[dict], comp: list[dict], figs: list[tuple[str, Path]], n_cells: int,
                preset: str, machine_notes: list[str] | None = None) -> None:  # fmt: skip
    loads = [r["load1"] for r in rows if r.get("load1") is not None]
    when = sorted(r["started_utc"] for r in rows if r.get("started_utc"))
    n_runs = sum(r["n"] for r in rows)
    intro = (
        f"{len(rows)} of {n_cells} planned cells have complete runs ({n_runs} runs; preset {preset}). "
        f"Runs started between {when[0] if when else '?'} and {when[-1] if when else '?'} UTC {_where(rows)}, "
        f"1-min load average {min(loads, default=0):.1f} to {max(loads, default=0):.1f} during the runs "
        f"({'quiet' if max(loads, default=0) < 2 else 'busy at times: over 2, work waited for a core'}). "
        f"Ours: mean ± 95 % CI over the repeats, each a mean over its phase; {_one_run(rows)} 'same set-up' "
        "names what differed from the publication: link rate, run length (the thesis ran 180 s), ping-pongs per "
        "size, and on every row the switch (our paced traffic manager vs bmv2's queues and output buffer), its "
        "buffers and the CPU; rates and delays at another link rate are not compared. Verdicts: loss and shares "
        "agree within ±3 percentage points, a published 0 % only with at most 0.1 %; throughput within ±10 %; "
        "latencies and times within x1.5, no absolute band ('both under 1 ms' or '1 s' where both are that small, "
        "its own verdict). Most of the thesis's delays are levels its per-second series holds; where it gives the "
        "top of a rising series or one second's value ('(peak)'), our phase mean is not compared with it, except "
        "that a mean over x1.5 above the peak is higher; where it gives where a falling series ends ('(series "
        "end)'), only 'ours lower' (below that end by more than x1.5) can be said. The "
        "write counts are the thesis's formula (7.4), counted apart. 'valid runs': runs whose validity checks "
        "passed (the congested port was busy, senders sent their rate, little CPU steal)."
    )
    blocks: list[tuple[str, tuple[list[str], list[list[str]]]]] = []
    for section in ["7.1 RUNTIME", "7.2 PROACTIVE", "7.3 MPI", "7.4 control-plane writes", "Conference paper evaluation"]:
        lines = [x for x in comp if x["section"] == section]
        if lines:
            blocks.append((f"Thesis {section}" if section[0].isdigit() else section, _table(lines)))
    pc = paper_claims(rows)
    if pc[1]:
        blocks.append(("Conference paper evaluation: its qualitative results", pc))
    tt = _transition_table(rows)
    if tt[1]:
        blocks.append(("RUNTIME transition times (high class; iperf at 1 s, the switch at 0.25 s)", tt))
    for topo in TOPOLOGIES:
        for proto in PROTOCOLS:
            t = _mpi_table(rows, topo, proto)
            if t[1]:
                blocks.append((f"MPI ping-pong latency by message size, {topo}, {proto.upper()} load", t))
    mt = machines_table(rows)
    if len(mt[1]) > 1 or any(len(r.get("nodes", [])) > 1 for r in rows) or machine_notes:
        blocks.append(("Machines", mt))
    warn = [f"{r['topo']}-{r['case']}-{r['alg']}-{r['proto']}: {w}" for r in rows for w in r["warnings"]]
    counts = verdict_counts(comp)
    md = ["# lanes lab sweep", "", intro, "", *(f"- {c}" for c in counts), ""]
    body = [f"<h1>lanes lab sweep</h1><p>{html.escape(intro)}</p>"]
    if counts:
        body.append("<ul>" + "".join(f"<li>{html.escape(c)}</li>" for c in counts) + "</ul>")
    for title, (head, tbl) in blocks:
        md += [f"## {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        md += ["| " + " | ".join(str(c) for c in r) + " |" for r in tbl] + [""]
        body.append(f"<h2>{html.escape(title)}</h2>" + _html_table(head, tbl))
    if machine_notes:
        md += ["## Comparisons across machines", "", *(f"- {n}" for n in machine_notes), ""]
        body.append("<h2>Comparisons across machines</h2><ul>"
                    + "".join(f"<li>{html.escape(n)}</li>" for n in machine_notes) + "</ul>")  # fmt: skip
    if figs:
        md += ["## Figures", ""]
        body.append("<h2>Figures</h2>")
        for title, f in figs:
            md += [f"**{title}**", "", f"![{title}](figures/{f.name})", ""]
            body.append(f"<h3>{html.escape(title)}</h3><img src='figures/{html.escape(f.name)}'>")
    if warn:
        md += ["## Validity warnings", "", *(f"- {w}" for w in warn), ""]
        body.append("<h2>Validity warnings</h2><ul>" + "".join(f"<li>{html.escape(w)}</li>" for w in warn) + "</ul>")
    atomic.write_text(rep / "report.md", "\n".join(md) + "\n")
    atomic.write_text(
        rep / "report.html",
        "<!doctype html><html><head><meta charset='utf-8'><title>lanes lab sweep</title><style>"
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #aaa;padding:3px 8px}</style></head><body>" + "".join(body) + "</body></html>\n"
    )


def _where(rows: list[dict]) -> str:
    """The machines the runs ran on, as the cells recorded them (reports of before: the VM they had)."""
    kinds = sorted({k for r in rows for k in r.get("machine_kinds", []) if k != "?"})
    nodes = {n for r in rows for n in r.get("nodes", []) if n != "?"}
    if not kinds:
        return "on a 2-core shared VM"
    return f"on {len(nodes)} node{'s' if len(nodes) != 1 else ''} ({'; '.join(kinds)})"


def _one_run(rows: list[dict]) -> str:
    """How many cells are a single run, said where the numbers are introduced."""
    once = sum(r["n"] == 1 for r in rows)
    if not once:
        return "every cell was run more than once."
    which = "every cell is" if once == len(rows) else f"{once} of {len(rows)} cells are"
    return (f"{which} one run, marked '(one run)': such a number has no spread, and a repeated cell "
            "can move by more than its verdict's tolerance from one run to the next.")  # fmt: skip


def _html_table(head: list[str], rows: list[list]) -> str:
    h = "".join(f"<th>{html.escape(str(c))}</th>" for c in head)
    b = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{h}</tr>{b}</table>"
