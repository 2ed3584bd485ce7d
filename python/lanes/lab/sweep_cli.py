"""`lanes lab sweep`: argument parsing and the steps after the runs (tables, CSV, report)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from lanes.errors import LanesError
from lanes.lab import mpi


def register_sweep(sub: argparse._SubParsersAction) -> None:
    from lanes.lab.sweep import ALGS, CASES, PRESETS, PROTOS, TOPOS

    s = sub.add_parser("sweep", help="the thesis's matrix of runs, resumable, with a report")
    s.add_argument("--preset", default="fast", choices=list(PRESETS),
                   help="; ".join(f"{p.name}: {p.note}" for p in PRESETS.values()))  # fmt: skip
    s.add_argument("--topos", help=f"comma-separated subset of {','.join(TOPOS)}")
    s.add_argument("--cases", help=f"comma-separated subset of {','.join(CASES)}")
    s.add_argument("--algs", help=f"comma-separated subset of {','.join(ALGS)}")
    s.add_argument("--protos", help=f"comma-separated subset of {','.join(PROTOS)}")
    s.add_argument("--repeats", type=int, default=1, help="runs per cell (mean and 95%% CI when > 1)")
    s.add_argument("--duration", type=float, help="seconds per run (overrides the preset's)")
    s.add_argument("--mpi-iters", type=int, metavar="N", help="ping-pongs per message size (overrides the preset's)")
    s.add_argument("--mpi-timeout", type=float, default=mpi.TIMEOUT_S, metavar="S",
                   help="each MPI run stops its ping-pong after S s, keeping the sizes measured")  # fmt: skip
    s.add_argument("--link-mbps", type=float, help="one link rate for every topology (overrides the preset's)")
    s.add_argument("--report-only", action="store_true", help="run nothing; tables and report of what is there")
    s.add_argument("--dry-run", action="store_true", help="list the cells and the time estimate, run nothing")
    s.add_argument("--out", type=Path, required=True, help="sweep directory (one sub-directory per cell)")
    s.add_argument("--report-dir", type=Path, help="where the report goes (default: OUT/report); small files only")
    s.set_defaults(func=_sweep)
    r = sub.add_parser("sweep-report", help="a sweep's report again from its committed sweep.csv (runs nothing)")
    r.add_argument("dirs", nargs="+", type=Path, help="report directories (sweep.csv, mpi_sizes.csv, report.md)")
    r.set_defaults(func=_sweep_report)


def _sweep_report(args: argparse.Namespace) -> int:
    from lanes.lab.sweep_report import verdict_counts
    from lanes.lab.sweep_reread import rewrite

    for d in args.dirs:
        comp = rewrite(d)
        print(f"{d}: " + " ".join(verdict_counts(comp)))
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from lanes.lab.sweep import PRESETS, Eta, is_complete, plan_cells, sweep

    preset = PRESETS[args.preset]
    cells = plan_cells(preset, args.topos, args.cases, args.algs, args.protos, args.repeats, args.duration,
                       args.mpi_iters, args.link_mbps, args.mpi_timeout)  # fmt: skip
    todo = [c for c in cells if not is_complete(c, c.run_dir(args.out, args.repeats))]
    if args.dry_run:
        for c in cells:
            state = "to run" if c in todo else "complete"
            print(f"{c.name} r{c.repeat}: {c.link_mbps:g} Mb/s, {c.duration_s:g} s, {state}")
        print(f"{len(todo)} of {len(cells)} cells to run, {Eta().text(todo)}")
        return 0
    if not args.report_only:
        if os.geteuid() != 0:
            raise LanesError("lanes lab sweep needs root (Mininet)")
        sweep(cells, args.out, args.repeats, preset)
    from lanes.lab.sweep_report import write_all

    write_all(args.out, cells, args.repeats, preset, args.report_dir)
    return 0
