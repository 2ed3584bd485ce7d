"""`lanes fabric counter-order` (a NoFTree node order from port counters) and `lanes fabric
paths-modified` (Paper IV's paths-modified measure after a first link failure)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from lanes.errors import LanesError
from lanes.fabric import counterlive, counters, native


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise LanesError(f"cannot read {path}: {e.strerror}") from e


def cmd_counter_order(args: argparse.Namespace) -> int:
    hosts = counters.hosts_from_netlist(_read(args.net))
    if args.counters:
        text, source = _read(args.counters), args.counters
    else:
        flows = counterlive.read_flows(_read(args.ibsim_flows), args.ibsim_flows)
        workdir = Path(args.workdir or Path(args.out).resolve().parent / "counters-ibsim")
        print(
            f"fabric: ibsim + OpenSM on {args.net}, counters set and read with perfquery ...", file=sys.stderr
        )
        text = counterlive.set_and_read(args.net, flows, str(workdir))
        source = str(workdir / "perfquery.txt")
        Path(source).write_text(text, encoding="utf-8")
    received = counters.received_bytes(counters.parse_perfquery(text, source), hosts)
    order = counters.order_by_received(received, hosts, args.min_bytes)
    try:
        Path(args.out).write_text("".join(f"{n}\n" for n in order), encoding="utf-8")
    except OSError as e:
        raise LanesError(f"cannot write {args.out}: {e.strerror}") from e
    r: dict[str, Any] = {
        "counters": source,
        "hosts_read": len(received),
        "min_bytes": args.min_bytes,
        "order": [{"node": n, "received_bytes": received[n]} for n in order],
        "out": args.out,
    }
    if args.json:
        print(json.dumps(r, indent=2))
    else:
        print(
            f"{len(received)} hosts read from {source}; {len(order)} received at least {args.min_bytes} bytes:"
        )
        for n in order:
            print(f"  {n}: {received[n]} bytes")
        print(f"order -> {args.out}")
    return 0


def cmd_paths_modified(args: argparse.Namespace) -> int:
    opts = {"engines": args.engines.split(","), "runs": args.runs, "seed": args.seed}
    print(f"fabric: failing every switch link of {args.net} in turn ...", file=sys.stderr)
    r = native.paths_modified(args.net, opts)
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    print(
        f"{r['nodes']} nodes, {r['links']} links failed one at a time, {r['runs']} bisect runs of "
        f"{r['flows_per_run']} flows"
    )
    for e in r["engines"]:
        print(
            f"{e['engine']:<17} paths modified per run: mean {e['paths_mean']:.2f} (exact "
            f"{e['paths_expected']:.2f}, median {e['paths_median']}, max {e['paths_max']}); "
            f"LFT entries changed over all links {e['entries_changed']}, SMPs {e['smps']}"
        )
    return 0


def register(sub: Any) -> None:
    c = sub.add_parser(
        "counter-order", help="a node order for noftree from the hosts' port counters (received data)"
    )
    c.add_argument("net", help="netlist naming the hosts' LIDs")
    src = c.add_mutually_exclusive_group(required=True)
    src.add_argument("--counters", help="perfquery output for the hosts (basic or -x), one after the other")
    src.add_argument(
        "--ibsim-flows",
        help="file of 'SRC DST BYTES' flows: set them as the hosts' counters on ibsim and read them back "
        "with perfquery",
    )
    c.add_argument("--workdir", help="with --ibsim-flows: directory for ibsim/OpenSM logs and perfquery.txt")
    c.add_argument(
        "--min-bytes",
        type=int,
        default=1 << 20,
        help="leave out hosts that received less (management MADs alone; default 1 MiB)",
    )
    c.add_argument("--out", required=True, help="order file to write (names, busiest receiver first)")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_counter_order)

    p = sub.add_parser(
        "paths-modified", help="paths modified after a first link failure over random bisect runs (Paper IV)"
    )
    p.add_argument("net")
    p.add_argument(
        "--engines",
        default="ftree,slimupdate-paper,slimupdate",
        help="comma list of ftree, slimupdate, slimupdate-paper, slimupdate-paper-intact (Paper IV's "
        "with the intact tree's maximum counters), mfattree",
    )
    p.add_argument("--runs", type=int, default=10000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_paths_modified)
