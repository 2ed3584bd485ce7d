#!/usr/bin/env python3
"""Network-aware scheduling on Mininet: every algorithm of case nas on nas3 and nas-ch2 with
repeats (the controller's and the data plane's), the runs that must stay quiet (false positives),
TCP, and nas3 beside a CPU-bound process; then the lab report and each claim checked against its bound.

    sudo .venv/bin/python bench/nas.py [--repeats 3] [--only nas3,ch2,quiet,tcp,inband,busy] [--out results/bench/nas]

About 50 s per run; the defaults make 50 runs (45 minutes). Writes OUT/checks.json, OUT/checks.md
and OUT/report/report.md (the lab report of the quiet runs; OUT/busy/report of those beside a hog). A cell whose runs are all in OUT already
is not run again (delete its directory to measure it anew).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lab_vs_htb import CpuHog

REPO = Path(__file__).resolve().parents[1]
LANES = REPO / ".venv" / "bin" / "lanes"

# the runs that must stay quiet: (name, topology, extra args)
QUIET = [
    ("line", "nas-line", ()),
    ("only_up", "nas3", ("--roles", "victim,up")),
    ("only_down", "nas3", ("--roles", "victim,down")),
    ("uncongested", "nas3", ("--load", "40")),
]
# group -> [(name, topo, alg, proto, extra args, repeats: None = --repeats)]
MATRIX = {
    "nas3": [(f"nas3_udp_{a}", "nas3", a, "udp", (), None)
             for a in ("nas-off", "nas-manual", "nas-auto", "nas-auto-floor")],
    "ch2": [(f"ch2_udp_{a}", "nas-ch2", a, "udp", (), None) for a in ("nas-off", "nas-auto")],
    "quiet": [(f"quiet_{n}", topo, "nas-auto", "udp", extra, 1) for n, topo, extra in QUIET],
    "tcp": [(f"nas3_tcp_{a}", "nas3", a, "tcp", (), 2) for a in ("nas-off", "nas-auto")],
    "inband": [
        ("nas3_udp_nas-inband", "nas3", "nas-inband", "udp", (), None),
        ("nas3_udp_nas-inband-floor", "nas3", "nas-inband-floor", "udp", (), None),
        ("ch2_udp_nas-inband", "nas-ch2", "nas-inband", "udp", (), None),
        *[(f"quiet_{n}_inband", topo, "nas-inband", "udp", extra, 1) for n, topo, extra in QUIET],
        ("nas3_tcp_nas-inband", "nas3", "nas-inband", "tcp", (), 2),
    ],
    "busy": [(f"busy_nas3_udp_{a}", "nas3", a, "udp", (), None) for a in ("nas-auto", "nas-inband")],
}  # fmt: skip


def run_cell(out: Path, name: str, topo: str, alg: str, proto: str, extra: tuple[str, ...], repeats: int,
             busy: bool) -> list[dict]:  # fmt: skip
    dirs = [out / name] if repeats == 1 else [out / name / f"rep{i}" for i in range(1, repeats + 1)]
    if all((d / "summary.json").is_file() for d in dirs):  # measured before: the run is resumed
        print(f"bench: {name}: results already in {out / name}", file=sys.stderr, flush=True)
        return [json.loads((d / "summary.json").read_text()) for d in dirs]
    cmd = [str(LANES), "lab", "run", "--case", "nas", "--topo", topo, "--alg", alg, "--proto", proto,
           "--link-mbps", "100", "--repeats", str(repeats), "--out", str(out / name), *extra]  # fmt: skip
    t = time.monotonic()
    print(
        f"bench: {name} ({repeats} run(s){', beside a CPU hog' if busy else ''})", file=sys.stderr, flush=True
    )
    if busy:
        with CpuHog():
            r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    else:
        r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    (out / f"{name}.log").write_text(r.stdout + r.stderr)
    if r.returncode != 0:
        print(
            f"bench: {name} failed: {(r.stderr.strip().splitlines() or ['?'])[-1]}",
            file=sys.stderr,
            flush=True,
        )
        return []
    runs = [json.loads((d / "summary.json").read_text()) for d in dirs]
    print(f"bench: {name} done in {time.monotonic() - t:.0f} s: active/ceiling "
          f"{[r['active_vs_ceiling'] for r in runs]}, gain {[r['gain'] for r in runs]}, demotions "
          f"{[r['deprioritisations'] for r in runs]}", file=sys.stderr, flush=True)  # fmt: skip
    return runs


def checks(res: dict[str, list[dict]]) -> list[tuple[str, str, bool | None]]:
    """(claim, what was measured, holds) for every claim that has its runs."""
    out: list[tuple[str, str, bool | None]] = []

    def add(claim: str, name: str, values: list, ok: bool) -> None:
        out.append((claim, f"{name}: {values}", ok))

    def got(name: str) -> list[dict]:
        return res.get(name, [])

    if r := got("nas3_udp_nas-manual"):
        v = [x["active_vs_ceiling"] for x in r]
        add("nas3 manual: active total >= 0.97 of the ceiling", "active/ceiling", v, min(v) >= 0.97)
        v = [x["baseline_vs_fair"] for x in r]
        add("nas3 manual: baseline within 5 % of the analytic share", "baseline/analytic", v,
            all(abs(x - 1) <= 0.05 for x in v))  # fmt: skip
    for name in (
        "nas3_udp_nas-auto",
        "busy_nas3_udp_nas-auto",
        "nas3_udp_nas-inband",
        "busy_nas3_udp_nas-inband",
    ):
        if r := got(name):
            who = f"nas3 {name.split('nas-')[-1]}" + (" beside a CPU hog" if name.startswith("busy") else "")
            v = [x["detection_s"] for x in r]
            add(
                f"{who}: demoted within 2 s of the onset",
                "detection s",
                v,
                all(x is not None and x <= 2 for x in v),
            )
            v = [x["active_vs_ceiling"] for x in r]
            add(
                f"{who}: active total >= 0.97 of the ceiling, every repeat",
                "active/ceiling",
                v,
                min(v) >= 0.97,
            )
            v = [x["victim_recovery_s"] for x in r]
            hold = r[0]["config"]["hold_s"]
            add(f"{who}: victim back to 90 % of its share within hold + 2 s = {hold + 2:g} s of the stop",
                "back by s", v, all(x is not None and x <= hold + 2 for x in v))  # fmt: skip
            v = [x["max_changes_per_hold"] for x in r]
            add(
                f"{who}: at most one state change per hold time",
                "most changes in a hold time",
                v,
                max(v) <= 1,
            )
            v = [x["false_positives"] for x in r]
            add(f"{who}: no false positives", "false positives", v, max(v) == 0)
    for alg in ("auto-floor", "inband-floor"):
        if r := got(f"nas3_udp_nas-{alg}"):
            v = [x["victim_share_of_first"] for x in r]
            add(
                f"{alg}: the demoted flow keeps >= 5 % of the first bottleneck",
                "victim share",
                v,
                min(v) >= 0.05,
            )
            v = [x["active_vs_ceiling"] for x in r]
            add(f"{alg}: total >= 0.95 of the ceiling", "active/ceiling", v, min(v) >= 0.95)
    for alg in ("auto", "inband"):
        if r := got(f"ch2_udp_nas-{alg}"):
            v = [x["gain"] for x in r]
            add(f"nas-ch2 {alg}: gain >= +40 % (ceiling +45.5 %)", "gain", v, min(v) >= 1.40)
    for n, _, _ in QUIET:
        for name in (f"quiet_{n}", f"quiet_{n}_inband"):
            if r := got(name):
                v = [(x["deprioritisations"], x["feedback_msgs"]) for x in r]
                add(
                    f"{name}: no demotion, no feedback",
                    "(demotions, feedback)",
                    v,
                    all(d == (0, 0) for d in v),
                )
    for alg in ("auto", "inband"):
        if (off := got("nas3_tcp_nas-off")) and (on := got(f"nas3_tcp_nas-{alg}")):
            a = sum(x["goodput_mbps"]["active"]["total"] for x in on) / len(on)
            o = sum(x["goodput_mbps"]["active"]["total"] for x in off) / len(off)
            add(f"TCP: active total with nas-{alg} not below nas-off (by more than 2 %, run-to-run noise)",
                "mean Mb/s on vs off",
                [round(a, 1), round(o, 1)], a >= 0.98 * o)  # fmt: skip
            v = [x["deprioritisations"] for x in on]
            out.append((f"TCP nas-{alg}: demotions (for the record)", f"demotions: {v}", None))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default=",".join(MATRIX), help="groups: " + ",".join(MATRIX))
    ap.add_argument("--out", type=Path, default=REPO / "results" / "bench" / "nas")
    args = ap.parse_args()
    groups = args.only.split(",")
    if bad := [g for g in groups if g not in MATRIX]:
        print(
            f"bench: unknown group(s) {', '.join(bad)} (expected some of {', '.join(MATRIX)})",
            file=sys.stderr,
        )
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    res: dict[str, list[dict]] = {}
    dirs: dict[str, list[str]] = {"quiet": [], "busy": []}  # the report of each machine state
    for g in groups:
        busy = g == "busy"
        out = args.out / "busy" if busy else args.out
        out.mkdir(parents=True, exist_ok=True)
        for name, topo, alg, proto, extra, reps in MATRIX[g]:
            res[name] = run_cell(out, name, topo, alg, proto, extra, reps or args.repeats, busy)
            if res[name]:
                dirs["busy" if busy else "quiet"].append(str(out / name))
    found = checks(res)
    (args.out / "checks.json").write_text(json.dumps([{"claim": c, "measured": m, "holds": ok} for c, m, ok in found],
                                                     indent=1))  # fmt: skip
    lines = ["| claim | measured | holds |", "|---|---|---|"]
    lines += [f"| {c} | {m} | {'–' if ok is None else 'yes' if ok else 'NO'} |" for c, m, ok in found]
    (args.out / "checks.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    for state, runs in dirs.items():
        if runs:
            report = args.out / ("report" if state == "quiet" else "busy/report")
            subprocess.run([str(LANES), "lab", "report", *runs, "--out", str(report)], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
