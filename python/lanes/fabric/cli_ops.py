"""`lanes fabric fail|live|guid-files|slurm`: failures, a live OpenSM subnet routed by lanes, and the
files operators hand to OpenSM's ftree and to Slurm."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from lanes.errors import LanesError
from lanes.fabric import native
from lanes.fabric.cli_args import read_names


def _emit(result: dict[str, Any], as_json: bool, lines: list[str]) -> None:
    if as_json:
        print(json.dumps(result, indent=2))
    else:
        print("\n".join(lines))


def _verdict(c: dict[str, Any]) -> str:
    return (
        f"deadlock free {c['deadlock_free']} (channel dependency graph acyclic {c['cdg_acyclic']}), "
        f"up/down {c['updown']} ({c['updown_violations']} violations), unreachable {c['unreachable']}"
    )


def cmd_fail(args: argparse.Namespace) -> int:
    opts: dict[str, Any] = {
        "links": args.link or [],
        "switches": args.switch or [],
        "nodes": args.node or [],
        "random_link_percent": args.random_links,
        "seed": args.seed,
        "engine": args.engine,
    }
    for key in ("old", "out", "out_net", "phases"):
        if getattr(args, key):
            opts[key] = getattr(args, key)
    print(f"fabric: failing and re-routing {args.net} with {args.engine} ...", file=sys.stderr)
    r = native.fail(args.net, opts)
    f, c, w, tr = r["failures"], r["check"], r["without_reroute"], r["transition"]
    worst = max((lv["max"] for lv in r["balance"]["levels"]), default=0)
    lines = [
        (
            f"failed: {f['links_failed']} links, {f['switches_failed']} switches, {f['nodes_failed']} nodes; "
            f"left {r['fabric']['switches']} switches, {r['fabric']['compute_nodes']} compute nodes"
        ),
        f"without re-routing: {_verdict(w)}",
        (
            f"{r['engine']}: re-routed in {r['seconds'] * 1000:.1f} ms, {r['smps']} SMPs to "
            f"{r['switches_updated']} switches (full reconfiguration {r['full_reconfiguration_smps']})"
        ),
        f"after: {_verdict(c)}; most destinations on one port {worst}",
        *(
            [
                f"sub-tree: {st['subtree_switches']} switches, {st['subtree_nodes']} nodes; "
                f"{st['rerouted_switches']} switches re-routed after {st['attempts']} attempt(s)"
                + ("; fell back to a full ftree re-route" if st["fell_back_to_full"] else "")
            ]
            if (st := r.get("subtree"))
            else []
        ),
        (
            f"transition: old+new acyclic {tr['union_acyclic']}, {tr['changed_entries']} entries change, "
            f"update order: {tr['advice']}"
        ),
    ]
    if "phases" in r:
        lines.append(_phase_line(r["phases"]))
    _emit(r, args.json, lines)
    return 0 if c["deadlock_free"] and c["unreachable"] == 0 else 1


def _phase_line(p: dict[str, Any]) -> str:
    return (
        f"drop-first phases: {p['dropped_entries']} of {p['changed_entries']} changed entries dropped first; "
        f"phase 1 {p['phase1_smps']} SMPs to {p['phase1_switches']} switches ({p['phase1']}), "
        f"phase 2 {p['phase2_smps']} SMPs to {p['phase2_switches']} ({p['phase2']}); "
        f"old->1 acyclic {p['old_to_phase1_acyclic']}, 1->new acyclic {p['phase1_to_new_acyclic']}"
    )


def cmd_phases(args: argparse.Namespace) -> int:
    r = native.phases(args.net, args.old, args.new, args.out)
    lines = [
        f"old acyclic {r['old_acyclic']}, new acyclic {r['new_acyclic']}, any update order safe {r['any_order']}",
        _phase_line(r),
    ]
    if args.live:
        from lanes.fabric import phaselive

        r["live"] = phaselive.apply(
            args.net, [args.old, r["phase1"], r["phase2"]], str(Path(args.out) / "live")
        )
        for row in r["live"][1:]:
            c = row["check"]
            lines.append(
                f"OpenSM {row['phase']}: {row['lft_blocks_written']} LFT blocks written, "
                f"{row['entries_differing']} entries differ from the phase, deadlock free {c['deadlock_free']}, "
                f"{c['unreachable']} (leaf, node) pairs dropped"
            )
    _emit(r, args.json, lines)
    return 0 if r["old_to_phase1_acyclic"] and r["phase1_to_new_acyclic"] else 1


def cmd_opensm_sl(args: argparse.Namespace) -> int:
    from lanes.fabric import slroutes

    net = args.net
    if args.torus:
        n, _, m = args.torus.partition("x")
        if not (n.isdigit() and m.isdigit()):
            raise LanesError(f"--torus {args.torus!r}: expected NxM, e.g. 4x4")
        Path(args.out).mkdir(parents=True, exist_ok=True)
        net = str(Path(args.out) / "torus.net")
        Path(net).write_text(slroutes.torus_netlist(int(n), int(m), args.hosts))
    elif net is None:
        raise LanesError("give a netlist or --torus NxM")
    r = slroutes.run(net, args.engine, args.out)
    vl, blind = r["vl"], r["vl_blind"]
    lines = [
        f"OpenSM {r['engine']}: {r['opensm_lanes_line']}; {r['pairs']} path SLs from the SA, SLs used {r['sls_used']}",
        f"per VL (opensm-sl2vl.dump): deadlock free {vl['deadlock_free']}, "
        + ", ".join(f"VL {v}: {d} deps {'acyclic' if ok else 'CYCLIC'}" for v, d, ok in vl["vls"]),
        f"VL-blind (every hop on one VL): deadlock free {blind['deadlock_free']}",
    ]
    _emit(r, args.json, lines)
    return 0 if vl["deadlock_free"] and vl["unreachable"] == 0 else 1


def cmd_guid_files(args: argparse.Namespace) -> int:
    io = read_names(args.io) or []
    r = native.guid_files(args.net, args.out, io)
    lines = [
        f"root_guid_file {r['root_guid_file']} ({r['roots']} roots)",
        f"cn_guid_file {r['cn_guid_file']} ({r['compute_nodes']} compute nodes)",
    ]
    if "io_guid_file" in r:
        lines.append(f"io_guid_file {r['io_guid_file']} ({r['io_nodes']} I/O nodes)")
    lines.append("OpenSM: opensm -R ftree -a ROOTS -u CNS [-G IOS]")
    _emit(r, args.json, lines)
    return 0


def cmd_slurm(args: argparse.Namespace) -> int:
    r = native.slurm(args.net, args.topology, args.order)
    lines = [f"{r['switches']} switches, {r['compute_nodes']} compute nodes"]
    lines += [f"{k}: {r[k]}" for k in ("topology_conf", "order_file") if k in r]
    _emit(r, args.json, lines)
    return 0


def cmd_live(args: argparse.Namespace) -> int:
    from lanes.fabric.live import LiveSubnet

    if args.rebalance and args.engine:
        raise LanesError("--rebalance picks lanes-ftree: give it or --engine, not both")
    engine = args.engine or ("lanes-ftree" if args.rebalance else "lanes-slimupdate")
    steps = []
    with LiveSubnet(args.net, engine, args.out, sweep=args.sweep, dumps=args.dumps) as sub:
        steps.append({**sub.startup(), **sub.state("start", args.traces)})
        for ev in args.event or []:
            print(f"fabric: {ev}", file=sys.stderr)
            steps.append(sub.event(ev, traces=args.traces))
    lines = []
    ok = True
    for s in steps:
        good = sum(t["ok"] for t in s["traces"])
        ok &= good == len(s["traces"])
        lanes = s.get("lanes") or {}
        rep = lanes.get("lanes", {})
        chk = rep.get("check", {})
        ok &= not chk or (chk["deadlock_free"] and chk["unreachable"] == 0)
        up = s.get("event_to_subnet_up_seconds", s.get("master_to_subnet_up_seconds"))
        lines.append(
            f"{s['event']}: SUBNET UP after {up} s, OpenSM sent {s['smps_sent']} SMPs; "
            f"{s['lids']} compute nodes, ibtracert {good}/{len(s['traces'])} follow the tables"
            + (
                f"; {lanes.get('engine')} {lanes.get('links')} links, routed in "
                f"{rep.get('routing_seconds', 0) * 1000:.1f} ms, {rep.get('lft_blocks_changed')} LFT blocks changed, "
                f"deadlock free {chk.get('deadlock_free')}, unreachable {chk.get('unreachable')}"
                if lanes
                else ""
            )
        )
    _emit({"engine": engine, "steps": steps}, args.json, lines)
    return 0 if ok else 1


def cmd_sa_storm(args: argparse.Namespace) -> int:
    opts = {
        "peers": args.peers,
        "queries_per_peer": args.queries_per_peer,
        "sa_rate": args.sa_rate,
        "timeout_s": args.timeout_ms / 1000,
        "retries": args.retries,
    }
    r = native.sa_storm(opts)
    lines = [
        (
            f"{args.peers} peers x {args.queries_per_peer} queries, SA {args.sa_rate:.0f} queries/s, "
            f"timeout {args.timeout_ms:.0f} ms, {args.retries} resends"
        )
    ]
    for row in r["rows"]:
        x = row["result"]
        lines.append(
            f"{row['event']:<40} {'cache' if row['cache'] else 'no cache':<8}: {x['queries']:>7} queries "
            f"({x['excess_queries']} excess, {x['failed']} failed), {x['seconds']:.2f} s"
        )
    _emit(r, args.json, lines)
    return 0


def register(sub: Any) -> None:
    st = sub.add_parser(
        "sa-storm", help="SA PathRecord storm after a migration/switch failure, with/without cache"
    )
    st.add_argument("--peers", type=int, default=2000)
    st.add_argument("--queries-per-peer", type=int, default=10)
    st.add_argument("--sa-rate", type=float, default=6000.0, help="PathRecords/s the SA answers (measure it)")
    st.add_argument("--timeout-ms", type=float, default=1000.0)
    st.add_argument("--retries", type=int, default=3)
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=cmd_sa_storm)

    f = sub.add_parser("fail", help="fail links/switches/nodes and re-route: SMPs, reachability, deadlock")
    f.add_argument("net")
    f.add_argument("--link", action="append", help="a link by one end, NODE[PORT] (repeatable)")
    f.add_argument("--switch", action="append", help="a switch name (repeatable)")
    f.add_argument("--node", action="append", help="a compute node name (repeatable)")
    f.add_argument("--random-links", type=float, default=0.0, help="percent of switch links failed at random")
    f.add_argument("--seed", type=int, default=1)
    f.add_argument(
        "--engine",
        choices=["ftree", "slimupdate", "slimupdate-paper", "mfattree", "subtree"],
        default="slimupdate",
        help="slimupdate: change only the entries the failure broke (Paper IV's counters when that "
        "cannot reach every node); slimupdate-paper: Paper IV's algorithm alone; subtree: re-route the "
        "failure's sub-tree only, widened until every node is reachable",
    )
    f.add_argument(
        "--old", help="tables in place (opensm-lfts.dump); default lanes's ftree of the intact fabric"
    )
    f.add_argument("--out", help="write the new tables (opensm-lfts.dump)")
    f.add_argument("--out-net", help="write the degraded netlist")
    f.add_argument("--phases", help="directory for the two drop-first phases (phase1.dump, phase2.dump)")
    f.add_argument("--json", action="store_true")
    f.set_defaults(func=cmd_fail)

    ph = sub.add_parser("phases", help="two-phase drop-first update from OLD to NEW tables, as OpenSM dumps")
    ph.add_argument("net")
    ph.add_argument("old", help="tables in place (opensm-lfts.dump)")
    ph.add_argument("new", help="tables to go to (opensm-lfts.dump)")
    ph.add_argument("--out", required=True, help="directory for phase1.dump and phase2.dump")
    ph.add_argument(
        "--live",
        action="store_true",
        help="apply old, phase 1, phase 2 with OpenSM on ibsim (-R file -U, SIGHUP)",
    )
    ph.add_argument("--json", action="store_true")
    ph.set_defaults(func=cmd_phases)

    sl = sub.add_parser(
        "opensm-sl", help="OpenSM's LASH/DFSSSP on ibsim: LFTs, path SLs (SA), SL2VL, checked per VL"
    )
    sl.add_argument("net", nargs="?", help="netlist (or --torus)")
    sl.add_argument("--torus", help="route an NxM 2-D torus instead of a netlist, e.g. 4x4")
    sl.add_argument("--hosts", type=int, default=1, help="compute nodes per torus switch")
    sl.add_argument("--engine", choices=["lash", "dfsssp"], default="lash")
    sl.add_argument("--out", required=True, help="directory for dumps, path-sl.txt and logs")
    sl.add_argument("--json", action="store_true")
    sl.set_defaults(func=cmd_opensm_sl)

    lv = sub.add_parser("live", help="OpenSM daemon on ibsim routing with a lanes engine; link/switch events")
    lv.add_argument("net")
    lv.add_argument(
        "--engine",
        help="the -R list: lanes-slimupdate (default: a failure changes only the routes it breaks), "
        "lanes-ftree, lanes-subtree, lanes-vswitch or OpenSM's ftree, minhop, ...",
    )
    lv.add_argument(
        "--rebalance",
        action="store_true",
        help="re-balance the whole fabric on every change (lanes-ftree; many more SMPs than the default)",
    )
    lv.add_argument("--event", action="append", help="'unlink NODE[PORT]', 'unlink NODE', 'relink ...'")
    lv.add_argument("--out", required=True, help="directory for logs and dumps")
    lv.add_argument("--sweep", type=int, default=1, help="OpenSM's sweep interval, seconds")
    lv.add_argument(
        "--dumps",
        action="store_true",
        help="have OpenSM write its routing dumps every sweep (-D 0x43; slow on large fabrics: they are "
        "written before SUBNET UP); by default the tables are read from the switches by SMP",
    )
    lv.add_argument("--traces", type=int, default=8)
    lv.add_argument("--json", action="store_true")
    lv.set_defaults(func=cmd_live)

    g = sub.add_parser("guid-files", help="root/compute/IO GUID files for OpenSM's ftree (-a, -u, -G)")
    g.add_argument("net")
    g.add_argument("--out", required=True, help="directory")
    g.add_argument("--io", help="file naming the I/O nodes")
    g.add_argument("--json", action="store_true")
    g.set_defaults(func=cmd_guid_files)

    s = sub.add_parser("slurm", help="Slurm topology.conf and a compute-node order file")
    s.add_argument("net")
    s.add_argument("--topology", help="topology.conf to write")
    s.add_argument("--order", help="node order file to write (leaf by leaf)")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_slurm)
