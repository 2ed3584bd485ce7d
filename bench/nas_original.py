#!/usr/bin/env python3
"""Network-aware scheduling at the original's own settings (`--preset original`: nas3 at 500/600
kb/s, 50-packet drop-tail queues, the hand trigger at 17 s): by hand, the controller, in band,
nothing, and TCP with nothing and with the controller; then one CSV row per run.

    sudo .venv/bin/python bench/nas_original.py [--repeats 3] [--only udp_nas-manual,...] --out DIR

Each cell takes the machine's timing lock (/work/timing.lock, waiting while another run holds
it) and records the load average before and after. A cell whose runs are all in DIR is not run
again. Writes DIR/runs.csv, one row per run; the runs' summary.json stay in DIR/CELL/repN, the
load averages in DIR/CELL/loadavg_start and loadavg_end.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LANES = REPO / ".venv" / "bin" / "lanes"
LOCK = "/work/timing.lock"
RANDOM = ("--drop", "random")  # the same with random drop on full (our default), beside drop-tail
# name -> (alg, proto, more options)
CELLS = {
    "udp_nas-manual": ("nas-manual", "udp", ()),
    "udp_nas-auto": ("nas-auto", "udp", ()),
    "udp_nas-manual_random": ("nas-manual", "udp", RANDOM),
    "udp_nas-auto_random": ("nas-auto", "udp", RANDOM),
    "tcp_nas-off": ("nas-off", "tcp", ()),
    "udp_nas-inband": ("nas-inband", "udp", ()),
    "udp_nas-inband_random": ("nas-inband", "udp", RANDOM),
    "tcp_nas-auto": ("nas-auto", "tcp", ()),
    "udp_nas-off": ("nas-off", "udp", ()),
}
KBPS = 1000.0  # Mb/s -> kb/s
FIELDS = ["cell", "alg", "proto", "drop", "rep", "udp_len", "baseline_kbps", "active_kbps", "gain", "ceiling_kbps",
          "analytic_kbps", "active_vs_ceiling", "victim_base_kbps", "up_base_kbps", "down_base_kbps",
          "victim_active_kbps", "up_active_kbps", "down_active_kbps", "onset_s", "demote_t_s", "detection_s",
          "demotions", "feedback_msgs", "false_positives", "loadavg_start", "loadavg_end"]  # fmt: skip


def run_cell(out: Path, name: str, repeats: int, lanes: Path) -> None:
    alg, proto, extra = CELLS[name]
    dirs = [out / name / f"rep{i}" for i in range(1, repeats + 1)]
    if all((d / "summary.json").is_file() for d in dirs):
        print(f"nas_original: {name}: already in {out / name}", file=sys.stderr, flush=True)
        return
    cmd = [str(lanes), "lab", "run", "--case", "nas", "--topo", "nas3", "--alg", alg, "--proto", proto,
           "--preset", "original", "--repeats", str(repeats), "--out", str(out / name), *extra]  # fmt: skip
    # the load average before and after, inside the lock, beside the cell
    script = 'd=$1; shift; cat /proc/loadavg > "$d/loadavg_start"; "$@"; rc=$?; cat /proc/loadavg > "$d/loadavg_end"; exit $rc'
    (out / name).mkdir(parents=True, exist_ok=True)
    print(f"nas_original: {name} ({repeats} runs, waiting for the timing lock)", file=sys.stderr, flush=True)
    log = (out / f"{name}.log").open("w")
    r = subprocess.run(["flock", LOCK, "sh", "-c", script, "sh", str(out / name), *cmd],
                       stdout=log, stderr=subprocess.STDOUT, check=False)  # fmt: skip
    if r.returncode != 0:
        print(f"nas_original: {name} failed (see {out / name}.log)", file=sys.stderr, flush=True)


def _kbps(x: float | None) -> float | None:
    return None if x is None else round(x * KBPS, 1)


def rows(out: Path) -> list[dict]:
    got = []
    # the cells above in their order, then any other run directory in DIR (a variant kept apart)
    names = [*CELLS, *sorted(d.name for d in out.iterdir() if d.is_dir() and d.name not in CELLS)]
    for name in names:
        for rep in sorted((out / name).glob("rep*/summary.json")):
            s = json.loads(rep.read_text())
            g = s["goodput_mbps"]
            demote = next((e for e in s["events"] if e["kind"] == "demote"), None)
            load = {k: (out / name / f"loadavg_{k}") for k in ("start", "end")}
            got.append({
                "cell": name, "alg": s["params"]["alg"], "proto": s["params"]["proto"], "rep": rep.parent.name,
                "drop": s["params"].get("drop"), "udp_len": s["params"].get("udp_len"),
                "baseline_kbps": _kbps(g["baseline"]["total"]), "active_kbps": _kbps(g["active"]["total"]),
                "gain": s["gain"], "ceiling_kbps": _kbps(s["ceiling_mbps"]),
                "analytic_kbps": _kbps(s["fair_mbps"]["total"]) if s["fair_mbps"] else None,
                "active_vs_ceiling": s["active_vs_ceiling"],
                **{f"{r}_base_kbps": _kbps(g["baseline"].get(r)) for r in ("victim", "up", "down")},
                **{f"{r}_active_kbps": _kbps(g["active"].get(r)) for r in ("victim", "up", "down")},
                "onset_s": s["onset_s"], "demote_t_s": demote["t"] if demote else None,
                "detection_s": s["detection_s"], "demotions": s["deprioritisations"],
                "feedback_msgs": s["feedback_msgs"], "false_positives": s["false_positives"],
                **{f"loadavg_{k}": " ".join(p.read_text().split()[:3]) if p.exists() else None
                   for k, p in load.items()},
            })  # fmt: skip
    return got


def write_csv(path: Path, rs: list[dict]) -> None:
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", help=f"some of {','.join(CELLS)}")
    ap.add_argument("--collate-only", action="store_true", help="only write runs.csv from DIR")
    ap.add_argument("--lanes", type=Path, default=LANES, help="the lanes command")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    if a.repeats < 2:
        sys.exit(f"nas_original: --repeats must be at least 2, got {a.repeats}")
    names = a.only.split(",") if a.only else list(CELLS)
    bad = [n for n in names if n not in CELLS]
    if bad:
        sys.exit(f"nas_original: unknown cell(s) {', '.join(bad)} (expected some of {', '.join(CELLS)})")
    if not a.collate_only:
        for name in names:
            run_cell(a.out, name, a.repeats, a.lanes)
    write_csv(a.out / "runs.csv", rows(a.out))
    print(f"nas_original: {a.out / 'runs.csv'}", file=sys.stderr)


if __name__ == "__main__":
    main()
