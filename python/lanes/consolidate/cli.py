"""`lanes consolidate`: workload delay (Paper VI) and delay-aware VM consolidation."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from lanes.errors import LanesError

DEFAULT_THRESHOLDS = "30,40,50,60,70,80,90,100"


def _numbers(text: str, what: str, integer: bool = False) -> list[float]:
    """Comma-separated positive numbers; `a:b:s` expands to a, a+s, ..., b, and so does `a,a+s,...,b`."""
    out: list[float] = []
    parts = [p.strip() for p in text.split(",")]
    for i, part in enumerate(parts):
        try:
            if part in ("...", "…"):
                if len(out) < 2 or i + 1 >= len(parts):
                    raise ValueError
                step, end = out[-1] - out[-2], float(parts[i + 1])
                if step <= 0 or end <= out[-1]:
                    raise ValueError
                last = out[-1]
                out.extend([last + k * step for k in range(1, round((end - last) / step))])  # then `end`
            elif ":" in part:
                a, b, s = (float(x) for x in part.split(":"))
                if s <= 0 or b < a:
                    raise ValueError
                out.extend(a + k * s for k in range(round((b - a) / s) + 1))
            else:
                out.append(float(part))
        except ValueError:
            raise LanesError(
                f"{what}: cannot read {part!r} (expected numbers like 12,16,32, 30:100:10 or 30,40,...,100)"
            ) from None
    if not out or any(not np.isfinite(v) or v <= 0 for v in out):
        raise LanesError(f"{what}: expected positive numbers, got {text!r}")
    if integer and any(v != int(v) for v in out):
        raise LanesError(f"{what}: expected whole numbers, got {text!r}")
    return out


def _read_series(path: str) -> np.ndarray:
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise LanesError(f"{path}: cannot read: {e}") from None
    vals: list[float] = []
    header_seen = False
    for lineno, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip().rstrip(",")
        if not line:
            continue
        try:
            v = float(line)
        except ValueError:
            if not vals and not header_seen:  # a CSV header such as "util_pct"
                header_seen = True
                continue
            raise LanesError(f"{path}:{lineno}: not a number: {line!r}") from None
        if not np.isfinite(v) or v < 0:
            raise LanesError(f"{path}:{lineno}: utilisation must be finite and >= 0")
        vals.append(v)
    if not vals:
        raise LanesError(f"{path}: no values")
    return np.array(vals)


def cmd_delay(args: argparse.Namespace) -> int:
    from lanes.consolidate.delay import backlog, bin_stats

    if not (args.cores > 0 and np.isfinite(args.cores)):
        raise LanesError("--cores must be positive")
    if not (args.step_s > 0 and np.isfinite(args.step_s)):
        raise LanesError("--step-s must be positive")
    util = _read_series(args.series_file)
    cap = 100.0 * args.cores
    dt = args.step_s / 60.0
    st = bin_stats(util, cap, dt)
    if args.series:
        q = backlog(util, cap, dt)
        print("t\tutil_pct\tbacklog_pct_min\tdelay_min")
        for t, (u, b) in enumerate(zip(util, q, strict=True), start=1):
            print(f"{t}\t{u:g}\t{b:.6g}\t{b / cap:.6g}")
    print(f"total_delay_min\t{float(st.delay_min):.6g}")
    print(f"delayed_pct\t{float(st.delayed_pct):.6g}")
    print(f"fill_pct\t{float(st.fill_pct):.6g}")
    return 0


def cmd_synth(args: argparse.Namespace) -> int:
    from lanes.consolidate.loader import write_day
    from lanes.consolidate.synthetic import SynthParams, generate, resample

    if args.days < 2 or args.vms < 1:
        raise LanesError("--days must be >= 2 and --vms >= 1")
    if args.jobs_per_day < 0:
        raise LanesError("--jobs-per-day must be >= 0")
    trace = generate(
        SynthParams(days=args.days, vms=args.vms, seed=args.seed, jobs_per_day=args.jobs_per_day)
    )
    if args.average > 1:
        try:
            trace = resample(trace, args.average)
        except ValueError as e:
            raise LanesError(str(e)) from None
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for d, day in enumerate(trace.days):
            write_day(out / f"{day}.csv.gz", trace.vms, trace.util[d])
    except OSError as e:
        raise LanesError(f"{out}: {e}") from None
    print(f"synth: {len(trace.days)} days x {len(trace.vms)} VMs, {trace.step_s:g} s samples -> {out}")
    return 0


def _grid_from_args(args: argparse.Namespace):
    from lanes.consolidate.cv import Grid
    from lanes.consolidate.packers import ENGINES, PACKERS

    packers = tuple(p.strip() for p in args.packer.split(",") if p.strip())
    bad = [p for p in packers if p not in PACKERS]
    if bad or not packers:
        raise LanesError(f"--packer: unknown {bad or args.packer!r}; choose from {', '.join(PACKERS)}")
    if args.engine not in ENGINES:
        raise LanesError(f"--engine: choose from {', '.join(ENGINES)}")
    return Grid(
        engine=args.engine,
        packers=packers,
        cores=tuple(int(c) for c in _numbers(args.cores, "--cores", integer=True)),
        thresholds=tuple(t / 100.0 for t in _numbers(args.thresholds, "--thresholds")),
        limits=tuple(_numbers(args.delay_limits, "--delay-limits")),
        delay_thresholds=(
            tuple(t / 100.0 for t in _numbers(args.delay_thresholds, "--delay-thresholds"))
            if args.delay_thresholds
            else None
        ),
    )


def cmd_cv(args: argparse.Namespace) -> int:
    grid = _grid_from_args(args)
    if args.min_days < 1:
        raise LanesError("--min-days must be >= 1")
    if args.step_s is not None and not args.step_s > 0:
        raise LanesError("--step-s must be positive")
    from lanes.consolidate.paths import planetlab_dir
    from lanes.consolidate.run import run_cv_to_dir

    data = Path(args.data) if args.data else planetlab_dir()
    run_cv_to_dir(
        data,
        Path(args.out),
        grid,
        args.min_days,
        args.step_s,
        args.jobs,
        args.title or data.name,
        plots=not args.no_plots,
    )
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from lanes.consolidate.full_report import make_full_report
    from lanes.consolidate.paths import planetlab_dir

    grid = _grid_from_args(args)
    data = Path(args.planetlab) if args.planetlab else planetlab_dir()
    make_full_report(data, Path(args.out), grid, args.jobs, args.seed)
    return 0


def _add_grid_args(p: argparse.ArgumentParser, packers: str, delay_thresholds: str | None) -> None:
    p.add_argument("--cores", default="12,16,32", help="bin sizes in cores, comma-separated")
    p.add_argument("--thresholds", default=DEFAULT_THRESHOLDS, help="packing thresholds in %% of capacity")
    p.add_argument(
        "--delay-thresholds",
        default=delay_thresholds,
        help="thresholds for the delay packers (default: --thresholds%s)"
        % ("" if delay_thresholds is None else f"; here {delay_thresholds}, the paper's Table II grid"),
    )
    p.add_argument("--delay-limits", default="1,10,100,1000", help="accepted delay per bin, minutes per day")
    p.add_argument(
        "--packer", default=packers, help="util, util-bf, delay, delay-bf, delay-corr (comma-separated)"
    )
    p.add_argument("--jobs", type=int, default=None, help="folds run in parallel (default: CPU count)")
    p.add_argument(
        "--engine",
        default="native",
        help="delay packers in Rust (native, the default) or numpy (the reference, several times slower)",
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    top = subparsers.add_parser(
        "consolidate", help="workload delay and delay-aware VM consolidation (Paper VI)"
    )
    sub = top.add_subparsers(dest="consolidate_command", metavar="ACTION", required=True)

    p = sub.add_parser("delay", help="total delay Q of one summed utilisation series")
    p.add_argument("--cores", type=float, required=True, help="cores of the machine (capacity 100 %% each)")
    p.add_argument("--step-s", type=float, default=60.0, help="seconds per sample (default 60)")
    p.add_argument("--series", action="store_true", help="also print the delay of every interval")
    p.add_argument(
        "series_file", metavar="SERIES.csv", help="one utilisation value (%%) per line, - for stdin"
    )
    p.set_defaults(func=cmd_delay)

    p = sub.add_parser("synth", help="write a synthetic trace in the paper's pattern (CSV per day)")
    p.add_argument("--out", required=True)
    p.add_argument("--days", type=int, default=13)
    p.add_argument("--vms", type=int, default=405)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--average", type=int, default=1, help="average groups of N 1-minute samples (5: PlanetLab-like)"
    )
    p.add_argument(
        "--jobs-per-day",
        type=float,
        default=0.0,
        help="unplanned batch jobs per VM per day, at random times (default 0: days repeat up to noise)",
    )
    p.set_defaults(func=cmd_synth)

    p = sub.add_parser("cv", help="leave-one-day-out cross-validation, tables and plots")
    p.add_argument(
        "--data",
        default=None,
        help="directory of day CSVs (vm,u000,... per row); default: the PlanetLab trace in "
        "data/planetlab of the repository, or $LANES_PLANETLAB",
    )
    p.add_argument("--min-days", type=int, default=7, help="keep VMs present on at least this many days")
    p.add_argument("--step-s", type=float, default=None, help="seconds per sample (default: 86400 / samples)")
    p.add_argument("--out", required=True)
    p.add_argument("--title", default=None)
    p.add_argument("--no-plots", action="store_true")
    _add_grid_args(p, "util,delay", None)
    p.set_defaults(func=cmd_cv)

    p = sub.add_parser("report", help="PlanetLab + synthetic (1- and 5-minute) runs and one report.md")
    p.add_argument(
        "--planetlab",
        default=None,
        help="PlanetLab day CSVs (default: data/planetlab of the repository, or $LANES_PLANETLAB)",
    )
    p.add_argument("--out", default="results/consolidate")
    p.add_argument("--seed", type=int, default=1)
    _add_grid_args(p, "util,util-bf,delay,delay-bf,delay-corr", "70,80,90,100")
    p.set_defaults(func=cmd_report)
