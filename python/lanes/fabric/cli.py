"""`lanes fabric gen|route|check|balance|diff|eval|opensm|migrate|order-study` (and cli_ops's,
cli_counters's)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from lanes.fabric import cli_counters, cli_ops, migsim, native
from lanes.fabric.cli_args import read_names, topology_spec

ROUTE_ENGINES = ["ftree", "noftree", "mfattree", "slimupdate", "slimupdate-paper", "vswitch-ftree"]
PATTERNS = ["bisect", "shift", "all-to-all", "bruck", "recdbl", "2-neighbor", "4-neighbor", "6-neighbor"]


def _ints(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from e


def _threads(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a thread count (0 = one per core), got {text!r}")
    return n


def _emit(result: dict[str, Any], as_json: bool, lines: list[str]) -> None:
    if as_json:
        print(json.dumps(result, indent=2))
    else:
        for line in lines:
            print(line)


def cmd_gen(args: argparse.Namespace) -> int:
    r = native.gen(topology_spec(args), args.out)
    _emit(
        r,
        args.json,
        [
            (
                f"{r['topology']}: {r['nodes']} nodes, {r['switches']} switches, {r['lids']} LIDs, "
                f"{r['lft_blocks_per_switch']} LFT blocks/switch, full reconfiguration {r['full_reconfiguration_smps']} SMPs"
            ),
            (
                f"spanning trees per leaf: {r['spanning_trees_different']} different, "
                f"{r['spanning_trees_disjoint']} disjoint"
            ),
        ]
        + (
            [
                (
                    f"vSwitch: {r['vswitch']['hypervisors']} hypervisors, {r['vswitch']['vms']} VMs, "
                    f"{r['vswitch']['lids']} LIDs (hypervisor LID: {r['vswitch']['hv_lid']}), "
                    f"{r['vswitch']['lft_blocks_per_switch']} LFT blocks/switch"
                )
            ]
            if "vswitch" in r
            else []
        )
        + ([f"netlist: {args.out}"] if args.out else []),
    )
    return 0


def cmd_route(args: argparse.Namespace) -> int:
    opts: dict[str, Any] = {"check": not args.no_check}
    if args.lids_from:
        opts["lids_from"] = args.lids_from
    if args.old:
        opts["old"] = args.old
    order = read_names(args.order)
    if order is not None:
        opts["order"] = order
    tenant = read_names(args.subtree)
    if tenant is not None:
        opts["subtree"] = tenant
    vms = read_names(args.vms)
    if vms is not None:
        opts["vms"] = vms
    if args.metabase_in:
        opts["metabase_in"] = args.metabase_in
    if args.metabase_out:
        opts["metabase_out"] = args.metabase_out
    if args.metabase_paths:
        opts["metabase_paths"] = args.metabase_paths
    print(f"fabric: routing {args.net} with {args.engine} ...", file=sys.stderr)
    r = native.route(args.net, args.engine, args.out, opts)
    lines = [
        (
            f"{r['engine']}: {r['compute_nodes']} nodes, {r['switches']} switches, {r['lids']} LIDs "
            f"routed in {r['seconds'] * 1000:.1f} ms -> {r['out']}"
        )
    ]
    if r.get("phase_ii_only"):
        lines.append(
            f"metabase read from {args.metabase_in} in {r['metabase_load_seconds'] * 1000:.1f} ms: phase II only"
        )
    if r.get("metabase_out"):
        lines.append(
            f"metabase (phase I, {r['metabase_build_seconds'] * 1000:.1f} ms) saved to {r['metabase_out']}"
        )
    chk = r.get("check")
    if chk:
        lines.append(
            f"deadlock free: {chk['deadlock_free']} (up/down violations {chk['updown_violations']}, "
            f"CDG acyclic {chk['cdg_acyclic']}), unreachable (leaf, LID) pairs {chk['unreachable']} (switch LIDs included)"
        )
    _emit(r, args.json, lines)
    return 0 if not chk or chk["deadlock_free"] else 1


def cmd_check(args: argparse.Namespace) -> int:
    if args.path_sl:
        v = native.check_vl(args.net, args.dump, args.path_sl, args.sl2vl or [], args.sl2vl_dump)
        vls = ", ".join(
            f"VL {vl}: {deps} deps {'acyclic' if ok else 'CYCLIC'}" for vl, deps, ok in v["vl"]["vls"]
        )
        lines = [
            f"deadlock free with SLs/VLs: {v['vl']['deadlock_free']} ({v['vl']['paths']} paths; {vls})",
            f"on one VL (every hop on VL 0) deadlock free: {v['vl_blind']['deadlock_free']}",
            f"paths unreachable {v['vl']['unreachable']}, looping {v['vl']['loops']}; SLs used {v['sls_used']}",
        ]
        _emit(v, args.json, lines)
        return 0 if v["vl"]["deadlock_free"] else 1
    r = native.check(args.net, args.dump)
    lines = [
        f"deadlock free: {r['deadlock_free']}",
        (
            f"routes checked {r['routes']}, up/down violations {r['updown_violations']}, "
            f"unreachable (leaf, LID) pairs {r['unreachable']} ({r['unreachable_switch_lids']} to switch LIDs)"
        ),
        (
            f"channel dependency graph: {r['cdg_channels']} channels, {r['cdg_dependencies']} dependencies, "
            f"acyclic {r['cdg_acyclic']}"
        ),
    ]
    if r.get("first_problem"):
        lines.append(f"first problem: {r['first_problem']}")
    _emit(r, args.json, lines)
    return 0 if r["deadlock_free"] and r["unreachable"] == 0 else 1


def balance_lines(b: dict[str, Any]) -> list[str]:
    out = [f"{b['destinations']} destinations, broken routes {b['broken_routes']}"]
    for lv in b["levels"]:
        hist = " ".join(f"{n}x{c}" for c, n in lv["histogram"])
        out.append(
            f"level {lv['level']} {lv['dir']:>4}: {lv['ports']} ports, min {lv['min']} max {lv['max']} [{hist}]"
        )
    return out


def cmd_balance(args: argparse.Namespace) -> int:
    b = native.balance(args.net, args.dump)
    _emit(b, args.json, balance_lines(b))
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    d = native.diff(args.old, args.new)
    _emit(
        d,
        args.json,
        [
            (
                f"entries changed {d['entries']}, blocks (SMPs) {d['blocks']} of {d['full_blocks']}, "
                f"switches touched {d['switches']} of {d['total_switches']}"
                + (f", {d['switches_removed']} switches gone" if d["switches_removed"] else "")
                + (f", {d['switches_added']} switches new (whole tables)" if d["switches_added"] else "")
            )
        ],
    )
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    opts: dict[str, Any] = {"pattern": args.pattern, "runs": args.runs, "seed": args.seed}
    order = read_names(args.order)
    if order is not None:
        opts["order"] = order
    if args.threads:
        opts["threads"] = args.threads
    r = native.evaluate(args.net, args.dump, opts)
    _emit(
        r,
        args.json,
        [
            (
                f"{r['pattern']} over {r['runs']} runs ({r['nodes']} nodes): effective bandwidth mean "
                f"{r['bandwidth_mean']:.4f} (min {r['bandwidth_min']:.4f}, max {r['bandwidth_max']:.4f}), "
                f"max congestion mean {r['max_congestion_mean']:.2f} ({r['threads']} threads)"
            )
        ],
    )
    return 0


def cmd_opensm(args: argparse.Namespace) -> int:
    from lanes.fabric import opensm

    r = opensm.run(
        args.net,
        args.engine,
        args.out,
        timeout=args.timeout,
        lfts=args.lfts,
        traces=args.traces,
        compare=args.compare,
        trace_nodes=args.trace_node,
    )
    lines = [
        f"opensm {r['engine']}: rc {r['rc']}, routing {r.get('routing_seconds')} s, dump {r.get('lfts_dump')}"
    ]
    if "fallback" in r:
        print(f"lanes: error: {r['fallback']}", file=sys.stderr)
    if "balance" in r:
        lines += balance_lines(r["balance"])
    if "check_error" in r:
        lines.append(f"lanes cannot check these tables: {r['check_error']}")
    if "traces" in r:
        ok = sum(1 for t in r["traces"] if t["ok"])
        lines.append(f"ibtracert: {ok}/{len(r['traces'])} sample routes match the LFTs")
    ours = r.get("ours")
    if ours and "balance_equal" in ours:
        lines.append(
            f"lanes {ours['engine']}: routing {ours['routing_seconds']} s, "
            f"balance equal to OpenSM's: {ours['balance_equal']}"
        )
    _emit(r, args.json, lines)
    bad = r["rc"] != 0 or "fallback" in r or (ours is not None and not ours.get("balance_equal", False))
    return 1 if bad else 0


def cmd_migrate(args: argparse.Namespace) -> int:
    opts: dict[str, Any] = {"vm": args.vm, "to": args.to, "mode": args.mode, "compare": not args.no_compare}
    if args.out_net:
        opts["out_net"] = args.out_net
    if args.out:
        opts["out"] = args.out
    r = native.migrate(args.net, args.dump, opts)
    lines = [
        (
            f"LID {r['mode']}: {r['vm']} {r['from_hypervisor']} -> {r['to_hypervisor']}: {r['smps']} SMPs to "
            f"{r['switches_updated']} of {r['physical_switches']} switches (bound {r['max_smps']}, full "
            f"reconfiguration {r['full_reconfiguration_smps']}), {r['vswitch_smps']} to the hypervisors"
        ),
        f"deadlock free: {r['check']['deadlock_free']}, unreachable {r['check']['unreachable']}",
    ]
    if "reroute_vswitch_ftree" in r:
        d = r["reroute_vswitch_ftree"]
        lines.append(f"re-routing with vswitch-ftree instead: {d['blocks']} SMPs to {d['switches']} switches")
    _emit(r, args.json, lines)
    return 0 if r["check"]["deadlock_free"] else 1


def cmd_order_study(args: argparse.Namespace) -> int:
    opts = {"pattern": args.pattern, "placement": args.placement, "runs": args.runs, "seed": args.seed}
    print(f"fabric: {args.runs} {args.placement} placements, {args.pattern} ...", file=sys.stderr)
    r = native.order_study(args.net, opts)
    lines = [
        (
            f"{r['pattern']} ({r['placement']}, {r['runs']} runs, {r['nodes']} nodes): effective bandwidth "
            f"ftree {r['ftree']['bandwidth_mean']:.3f}, SlimUpdate by node order "
            f"{r['slimupdate_by_order']['bandwidth_mean']:.3f}"
        )
    ]
    _emit(r, args.json, lines)
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("fabric", help="InfiniBand fat trees: generate, route, check, evaluate, OpenSM")
    sub = p.add_subparsers(dest="fabric_command", metavar="ACTION", required=True)

    g = sub.add_parser("gen", help="generate a fat tree and write an ibsim/ibnetdiscover netlist")
    g.add_argument("kind", choices=["xgft", "pgft", "kary", "named"])
    g.add_argument("--h", type=int, help="levels (checked against --m)")
    g.add_argument("--m", type=_ints, help="children per level, e.g. 18,18,36")
    g.add_argument("--w", type=_ints, help="parents per level, e.g. 1,18,18")
    g.add_argument("--p", type=_ints, help="parallel links per level (pgft)")
    g.add_argument("--k", type=int)
    g.add_argument("--n", type=int)
    g.add_argument("--name", help="thesis tree k-n-o-half|full, e.g. 18-3-1-full")
    g.add_argument("--radix", type=int, help="ports per switch in the netlist")
    g.add_argument(
        "--vfs", type=int, help="make every compute node a hypervisor (vSwitch) with this many VFs"
    )
    g.add_argument("--vms", type=_ints, help="VMs per hypervisor, cycled (default: all VFs), e.g. 4,1,1,1")
    g.add_argument(
        "--hv-lid",
        choices=["own", "shared"],
        default="own",
        help="hypervisor LID: its own (default) or the PF's (Paper II: 1 + VFs LIDs per hypervisor)",
    )
    g.add_argument("--out", help="netlist file to write")
    g.add_argument("--json", action="store_true")
    g.set_defaults(func=cmd_gen)

    r = sub.add_parser("route", help="compute LFTs and write opensm-lfts.dump")
    r.add_argument("net")
    r.add_argument(
        "--engine",
        default="ftree",
        choices=ROUTE_ENGINES,
        help="ftree (default), noftree (needs --order), mfattree, slimupdate (keeps --old's routes), "
        "slimupdate-paper (Paper IV's counters), vswitch-ftree",
    )
    r.add_argument("--out", required=True)
    r.add_argument("--lids-from", help="take LIDs from this opensm-lfts.dump (e.g. OpenSM's)")
    r.add_argument("--order", help="node order file (names, whitespace separated) for noftree")
    r.add_argument("--old", help="previous LFTs (slimupdate, --subtree)")
    r.add_argument(
        "--subtree",
        help="file of tenant node names: re-route only their sub-tree (ftree/noftree, needs --old)",
    )
    r.add_argument("--vms", help="file naming the running VMs (vswitch-ftree; default: every VF HCA)")
    r.add_argument("--metabase-out", help="mfattree: save the metabase (phase I) to this file")
    r.add_argument(
        "--metabase-in", help="mfattree: read a saved metabase and run phase II only (same topology)"
    )
    r.add_argument(
        "--metabase-paths",
        choices=["nodes", "disjoint"],
        help="mfattree: paths per leaf, one per node slot (default, = ftree) or the disjoint spanning trees",
    )
    r.add_argument("--no-check", action="store_true", help="skip the deadlock-freedom check")
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=cmd_route)

    c = sub.add_parser("check", help="deadlock freedom (up/down, channel dependency graph) and completeness")
    c.add_argument("net")
    c.add_argument("dump")
    c.add_argument("--path-sl", help="path SLs (saquery -p output or SLID DLID SL lines): check per VL")
    c.add_argument("--sl2vl", type=_ints, help="16 comma-separated VLs, one per SL (default identity)")
    c.add_argument("--sl2vl-dump", help="OpenSM's opensm-sl2vl.dump: SL-to-VL per switch and port pair")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_check)

    b = sub.add_parser("balance", help="destinations per port at each level and direction")
    b.add_argument("net")
    b.add_argument("dump")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=cmd_balance)

    d = sub.add_parser("diff", help="entries, blocks (SMPs) and switches that differ between two dumps")
    d.add_argument("old")
    d.add_argument("new")
    d.add_argument("--json", action="store_true")
    d.set_defaults(func=cmd_diff)

    e = sub.add_parser("eval", help="routing quality like ORCS: congestion and effective bandwidth")
    e.add_argument("net")
    e.add_argument("dump")
    e.add_argument(
        "--pattern",
        default="bisect",
        choices=PATTERNS,
    )
    e.add_argument("--runs", type=int, default=100)
    e.add_argument("--seed", type=int, default=1)
    e.add_argument("--order", help="node order file (ranks -> node names); default random per run")
    e.add_argument(
        "--threads", type=_threads, default=0, help="worker threads for the runs (default 0: one per core)"
    )
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=cmd_eval)

    o = sub.add_parser("opensm", help="run OpenSM once on ibsim with this netlist")
    o.add_argument("net")
    o.add_argument(
        "--engine",
        default="ftree",
        help="an OpenSM engine (ftree, minhop, updn, dfsssp, ..., file with --lfts) or a lanes one through "
        "the plugin (lanes-ftree, lanes-slimupdate, lanes-subtree, lanes-vswitch); a comma list is tried in order",
    )
    o.add_argument("--lfts", help="our opensm-lfts.dump to load with -R file -U")
    o.add_argument("--out", required=True, help="directory for dumps and logs")
    o.add_argument("--timeout", type=float, default=600.0)
    o.add_argument("--traces", type=int, default=8, help="sample routes to check with ibtracert")
    o.add_argument(
        "--trace-node", action="append", help="also trace routes to this compute node (repeatable)"
    )
    o.add_argument(
        "--compare", action="store_true", help="also route with our engine of the same name, compare balance"
    )
    o.add_argument("--json", action="store_true")
    o.set_defaults(func=cmd_opensm)

    m = sub.add_parser(
        "migrate", help="move a VM by LID swap or copy; SMP counts (the conference paper Alg. 1)"
    )
    m.add_argument("net")
    m.add_argument("dump", help="current LFTs (opensm-lfts.dump)")
    m.add_argument("--vm", required=True, help="VM node name")
    m.add_argument("--to", required=True, help="swap: an idle VF node name; copy: a hypervisor switch name")
    m.add_argument("--mode", choices=["swap", "copy", "min-copy"], default="swap")
    m.add_argument("--out-net", help="netlist with the VM moved")
    m.add_argument("--out", help="new LFTs")
    m.add_argument("--no-compare", action="store_true", help="skip counting a full vswitch-ftree re-route")
    m.add_argument("--json", action="store_true")
    m.set_defaults(func=cmd_migrate)

    s = sub.add_parser("order-study", help="Paper IV node orders: ftree vs SlimUpdate by node order")
    s.add_argument("net")
    s.add_argument("--pattern", default="bruck", choices=PATTERNS)
    s.add_argument("--placement", choices=["leaf-blocks", "random"], default="leaf-blocks")
    s.add_argument("--runs", type=int, default=100)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_order_study)

    cli_ops.register(sub)
    cli_counters.register(sub)
    migsim.register(sub)
