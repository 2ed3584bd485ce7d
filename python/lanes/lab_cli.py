"""`lanes lab run|sweep|report|clean`: the thesis's experiments on Mininet, and network-aware
scheduling's (`--case nas`). It sits above lanes.lab and lanes.nas: nas builds on the lab, and
this command offers both."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lanes.emu.topo import CLASSES_AT, TOPOLOGIES
from lanes.errors import LanesError
from lanes.lab import mpi
from lanes.lab.cases import CASES
from lanes.lab.traffic import PROTOCOLS
from lanes.nas.original import PRESETS
from lanes.nas.plan import NAS_ALGS
from lanes.nas.topo import NAS_TOPOLOGIES
from lanes.switch.modes import DROP_POLICIES, TM_MODELS, WAKE_MODES


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    lab = subparsers.add_parser("lab", help="thesis experiments on Mininet: run, sweep, report, clean")
    sub = lab.add_subparsers(dest="lab_command", metavar="ACTION", required=True)
    r = sub.add_parser("run", help="one experiment: topology, case, algorithm, protocol")
    r.add_argument("--topo", default="star", help=" | ".join(TOPOLOGIES + NAS_TOPOLOGIES))
    r.add_argument("--case", default="proactive", help=f"{' | '.join(CASES)} | nas")
    r.add_argument(
        "--alg", default="rlsp-drr",
        help="no | strict | rlsp-drr | drr | rlsp-drr-borrow | linux-htb; case nas: " + " | ".join(NAS_ALGS),
    )  # fmt: skip
    r.add_argument("--proto", default="udp", help=" | ".join(PROTOCOLS))
    r.add_argument("--link-mbps", type=float, help="link rate (default 100; tree2: ToR-aggregation x2)")
    r.add_argument("--duration", type=float, help="seconds, phases scale with it (default 20; case nas: 40)")
    r.add_argument("--high-load", type=float, default=50.0, metavar="PCT",
                   help="UDP rate of the high class in %% of the link (thesis: 50)")  # fmt: skip
    r.add_argument("--low-load", type=float, default=50.0, metavar="PCT",
                   help="UDP rate of each lower class in %% of the link (thesis: 50)")  # fmt: skip
    r.add_argument("--queue-depth", type=int, help="packets per switch queue (default 64)")
    r.add_argument("--switch-model", default="lanes", metavar="MODEL",
                   help="the switches' TM: lanes (paced, default) or bmv2 (a model of bmv2's: unpaced "
                   "scheduler into a 128-packet output buffer, as the thesis ran it)")  # fmt: skip
    r.add_argument("--mpi-iters", type=int, default=mpi.ITERATIONS, metavar="N",
                   help="case mpi: ping-pong round trips per message size")  # fmt: skip
    r.add_argument("--mpi-timeout", type=float, default=mpi.TIMEOUT_S, metavar="S",
                   help="case mpi: stop the ping-pong after S s of the run, keeping the sizes measured")  # fmt: skip
    r.add_argument("--no-host-shaping", action="store_true", help="no tc HTB on the host link ends")
    r.add_argument("--control", default="auto", choices=["auto", "p4runtime", "ctl"],
                   help="table writes over P4Runtime or the switch's command port")  # fmt: skip
    r.add_argument("--switch-rt", type=int, default=20, metavar="PRIO",
                   help="SCHED_FIFO priority of the lanes switch processes (0: normal scheduling)")  # fmt: skip
    r.add_argument("--burst-bytes", type=int, metavar="BYTES",
                   help="token bucket of the rate-limited classes (default: 1 ms of the rate + 1514 B)")  # fmt: skip
    r.add_argument("--batch-us", type=float, metavar="US",
                   help="lanes switch batch window (default: the switch's, four full frames at the link rate, 250 to 500 us)")  # fmt: skip
    r.add_argument("--classes-at", choices=CLASSES_AT, default="access",
                   help="which switches classify by sender: access (the thesis's virtual switches) or all "
                   "(the ToRs and the aggregation switch too)")  # fmt: skip
    r.add_argument("--wake", choices=WAKE_MODES,
                   help="which arrivals wake a lanes switch waiting for a departure (default: the switch's)")  # fmt: skip
    nas = r.add_argument_group("case nas (network-aware scheduling; topologies nas3, nas-ch2, nas-line)")
    nas.add_argument("--hold", type=float, default=3.0, metavar="S",
                     help="hold time of a deprioritisation after its last refresh")  # fmt: skip
    nas.add_argument("--load", type=float, default=100.0, metavar="PCT",
                     help="each sender's UDP rate in %% of its host link")  # fmt: skip
    nas.add_argument("--roles", help="only these flows: victim,up,down (default: all)")
    nas.add_argument("--repeats", type=int, default=1, help="run N times; aggregate.json with mean and 95%% CI")
    nas.add_argument("--preset", choices=PRESETS,
                     help="original: the original's own set-up (nas3 at 500/600 kb/s, 50-packet drop-tail "
                     "queues, the hand trigger at 17 s); options given beside it win")  # fmt: skip
    nas.add_argument("--manual-at", type=float, metavar="S", help="second of the hand trigger (nas-manual)")
    nas.add_argument("--drop", choices=DROP_POLICIES, help="what a full switch queue drops (default random)")
    r.add_argument("--out", type=Path, required=True, help="run directory")
    r.set_defaults(func=_run)
    rep = sub.add_parser("report", help="Markdown and HTML report comparing run directories")
    rep.add_argument("runs", nargs="+", type=Path, help="run directories (or parents of them)")
    rep.add_argument("--out", type=Path, required=True, help="report directory")
    rep.set_defaults(func=_report)
    from lanes.lab.sweep.cli import register_sweep

    register_sweep(sub)
    c = sub.add_parser("clean", help="remove what killed lab runs left behind (idempotent)")
    c.set_defaults(func=_clean)


def _run(args: argparse.Namespace) -> int:
    import os

    from lanes.lab.run import Params, run

    if os.geteuid() != 0:
        raise LanesError("lanes lab run needs root (Mininet)")
    if args.case == "nas":
        return _run_nas(args)
    if args.topo in NAS_TOPOLOGIES:
        raise LanesError(f"topology {args.topo} is for case nas (the thesis cases run on {', '.join(TOPOLOGIES)})")
    args.duration = 20.0 if args.duration is None else args.duration
    args.link_mbps = 100.0 if args.link_mbps is None else args.link_mbps
    args.queue_depth = 64 if args.queue_depth is None else args.queue_depth
    if not (0 < args.high_load <= 1000 and 0 < args.low_load <= 1000):
        raise LanesError("--high-load and --low-load must be between 0 and 1000 (% of the link)")
    if not 1 <= args.mpi_iters <= 10_000:
        raise LanesError(f"--mpi-iters must be 1 to 10000, got {args.mpi_iters}")
    if not 10 <= args.mpi_timeout <= 86_400:
        raise LanesError(f"--mpi-timeout must be 10 to 86400 s, got {args.mpi_timeout:g}")
    if args.queue_depth < 1:
        raise LanesError(f"--queue-depth must be at least 1, got {args.queue_depth}")
    if args.switch_model not in TM_MODELS:
        raise LanesError(f"--switch-model must be {' or '.join(TM_MODELS)}, got '{args.switch_model}'")
    if args.burst_bytes is not None and args.burst_bytes < 1:
        raise LanesError(f"--burst-bytes must be at least 1, got {args.burst_bytes}")
    if args.batch_us is not None and not 0 <= args.batch_us <= 10_000:
        raise LanesError(f"--batch-us must be 0 to 10000, got {args.batch_us:g}")
    run(
        Params(
            topo=args.topo, case=args.case, alg=args.alg, proto=args.proto, link_mbps=args.link_mbps,
            duration_s=args.duration, out=args.out, queue_depth=args.queue_depth,
            host_shaping=not args.no_host_shaping, control=args.control, switch_rt=args.switch_rt,
            high_load_pct=args.high_load, low_load_pct=args.low_load, burst_bytes=args.burst_bytes,
            batch_us=args.batch_us, wake=args.wake, mpi_iters=args.mpi_iters, mpi_timeout_s=args.mpi_timeout,
            switch_model=args.switch_model, classes_at=args.classes_at,
        )
    )  # fmt: skip
    return 0


def nas_params(args: argparse.Namespace) -> object:
    """NasParams from the command line: the preset's settings, then the options given beside it."""
    from lanes.nas.original import settings
    from lanes.nas.run import NasParams

    fields: dict[str, Any] = settings(args.alg) if args.preset else {"duration_s": 40.0}
    given = {"link_mbps": args.link_mbps, "queue_depth": args.queue_depth, "duration_s": args.duration,
             "manual_at_s": args.manual_at, "drop": args.drop}  # fmt: skip
    fields |= {k: v for k, v in given.items() if v is not None}
    if fields.get("queue_depth", 1) < 1:
        raise LanesError(f"--queue-depth must be at least 1, got {fields['queue_depth']}")
    if fields.get("link_mbps", 1) <= 0:
        raise LanesError(f"--link-mbps must be above 0, got {fields['link_mbps']:g}")
    return NasParams(
        topo=args.topo, alg=args.alg, proto=args.proto, out=args.out, hold_s=args.hold, load_pct=args.load,
        roles=args.roles.split(",") if args.roles else None, switch_rt=args.switch_rt, repeats=args.repeats,
        preset=args.preset, **{"link_mbps": 100.0, **fields},
    )  # fmt: skip


def _run_nas(args: argparse.Namespace) -> int:
    from lanes.nas.run import run

    if not 0 < args.load <= 1000:
        raise LanesError(f"--load must be between 0 and 1000 (% of the host link), got {args.load:g}")
    if not 0 < args.hold <= 600:
        raise LanesError(f"--hold must be between 0 and 600 s, got {args.hold:g}")
    if not 1 <= args.repeats <= 100:
        raise LanesError(f"--repeats must be 1 to 100, got {args.repeats}")
    run(nas_params(args))  # type: ignore[arg-type]
    return 0


def _report(args: argparse.Namespace) -> int:
    from lanes.lab.report import report
    from lanes.nas.report import section

    report(args.runs, args.out, {"nas": section})
    return 0


def _clean(args: argparse.Namespace) -> int:
    from lanes.emu.clean import clean

    clean()
    return 0
