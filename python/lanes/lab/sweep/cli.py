"""`lanes lab sweep`: argument parsing and the steps after the runs (tables, CSV, report)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from lanes.errors import LanesError
from lanes.lab import mpi


def register_sweep(sub: argparse._SubParsersAction) -> None:
    from lanes.emu.topo import TOPOLOGIES
    from lanes.lab.cases import CASES
    from lanes.lab.sweep.matrix import ALGS, PRESETS
    from lanes.lab.traffic import PROTOCOLS

    s = sub.add_parser("sweep", help="the thesis's matrix of runs, resumable, with a report")
    s.add_argument("--preset", default="fast", choices=list(PRESETS),
                   help="; ".join(f"{p.name}: {p.note}" for p in PRESETS.values()))  # fmt: skip
    s.add_argument("--topos", help=f"comma-separated subset of {','.join(TOPOLOGIES)}")
    s.add_argument("--cases", help=f"comma-separated subset of {','.join(CASES)}")
    s.add_argument("--algs", help=f"comma-separated subset of {','.join(ALGS)}")
    s.add_argument("--protos", help=f"comma-separated subset of {','.join(PROTOCOLS)}")
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
    s.add_argument("--compare-across-machines", action="store_true",
                   help="compare latencies of cells that ran on different kinds of machine (refused by default)")  # fmt: skip
    sl = s.add_argument_group("Slurm (--slurm: one job array task per cell, OUT on storage the nodes share)")
    sl.add_argument("--slurm", action="store_true", help="submit the cells to Slurm instead of running them here")
    sl.add_argument("--partition", help="the partition to submit to (default: the cluster's)")
    sl.add_argument("--max-parallel", type=int, metavar="N", help="at most N cells (nodes) at once")
    sl.add_argument("--sbatch-arg", action="append", default=[], metavar="ARG",
                    help="one more sbatch option, e.g. --sbatch-arg=--account=NAME (repeatable)")  # fmt: skip
    sl.add_argument("--poll", type=float, default=30.0, metavar="S", help="seconds between queue checks (default 30)")
    sl.add_argument("--no-wait", action="store_true", help="submit and return; the same command again waits and reports")
    s.set_defaults(func=_sweep)
    t = sub.add_parser("sweep-task", help="one cell of a sweep, as a Slurm task runs it (root)")
    t.add_argument("--sweep-out", type=Path, required=True, help="the sweep directory")
    t.add_argument("--repeats", type=int, default=1, help="the sweep's runs per cell")
    for name in ("topo", "case", "alg", "proto"):
        t.add_argument(f"--{name}", required=True)
    t.add_argument("--link-mbps", type=float, required=True)
    t.add_argument("--duration", type=float, required=True)
    t.add_argument("--mpi-iters", type=int, required=True)
    t.add_argument("--mpi-timeout", type=float, default=mpi.TIMEOUT_S)
    t.add_argument("--repeat", type=int, default=1, help="which run of the cell (1-based)")
    t.set_defaults(func=_sweep_task)
    r = sub.add_parser("sweep-report", help="a sweep's report again from its committed sweep.csv (runs nothing)")
    r.add_argument("dirs", nargs="+", type=Path, help="report directories (sweep.csv, mpi_sizes.csv, report.md)")
    r.add_argument("--compare-across-machines", action="store_true",
                   help="compare latencies of cells that ran on different kinds of machine")  # fmt: skip
    r.set_defaults(func=_sweep_report)


def _sweep_report(args: argparse.Namespace) -> int:
    from lanes.lab.sweep.report import verdict_counts
    from lanes.lab.sweep.reread import rewrite

    for d in args.dirs:
        comp = rewrite(d, args.compare_across_machines)
        print(f"{d}: " + " ".join(verdict_counts(comp)))
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from lanes.lab.sweep.matrix import PRESETS, Eta, is_complete, plan_cells, sweep

    preset = PRESETS[args.preset]
    cells = plan_cells(preset, args.topos, args.cases, args.algs, args.protos, args.repeats, args.duration,
                       args.mpi_iters, args.link_mbps, args.mpi_timeout)  # fmt: skip
    if args.slurm:
        return _slurm(args, cells, preset)
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
    from lanes.lab.sweep.report import write_all

    write_all(args.out, cells, args.repeats, preset, args.report_dir, args.compare_across_machines)
    return 0


def _slurm(args: argparse.Namespace, cells: list, preset: object) -> int:
    from lanes.lab.sweep.matrix import write_plan
    from lanes.lab.sweep.report import write_all
    from lanes.lab.sweep.slurm import SlurmOptions, check_options, slurm_sweep

    if args.report_only:
        raise LanesError("--slurm submits runs; --report-only runs nothing (give one of them)")
    opts = SlurmOptions(args.partition, args.max_parallel, list(args.sbatch_arg), args.poll, not args.no_wait)
    check_options(opts)
    if not args.dry_run:
        write_plan(cells, args.out, args.repeats, preset)  # type: ignore[arg-type]
    records = slurm_sweep(cells, args.out, args.repeats, opts, args.dry_run)
    if records is not None:
        write_all(args.out, cells, args.repeats, preset, args.report_dir, args.compare_across_machines)
    return 0


def _sweep_task(args: argparse.Namespace) -> int:
    """One cell: what a Slurm array task runs (exit 1 when the cell did not complete)."""
    from lanes.emu.clean import clean
    from lanes.interrupt import terminate_as_interrupt
    from lanes.lab.sweep.matrix import Cell, run_cell, say

    if os.geteuid() != 0:
        raise LanesError("lanes lab sweep-task needs root (Mininet)")
    if not 1 <= args.repeat <= args.repeats <= 100:
        raise LanesError(f"--repeat must be 1 to --repeats ({args.repeats}), got {args.repeat}")
    cell = Cell(args.topo, args.case, args.alg, args.proto, args.link_mbps, args.duration, args.mpi_iters,
                args.repeat, args.mpi_timeout)  # fmt: skip
    env = os.environ
    slurm = {"job": f"{env.get('SLURM_ARRAY_JOB_ID', '?')}_{env.get('SLURM_ARRAY_TASK_ID', '?')}",
             "node": env.get("SLURMD_NODENAME", "")}  # fmt: skip
    say(f"{cell.name} r{cell.repeat} on {os.uname().nodename}, task {slurm['job']}")
    clean()  # what a task killed on this node before may have left (dead runs only)
    with terminate_as_interrupt():  # scancel and the time limit send SIGTERM: the run stops cleanly
        rec = run_cell(cell, args.sweep_out, args.repeats, {"slurm": slurm})
    return 0 if rec["ok"] else 1
