"""`lanes fabric migsim`: sequences of VM migrations on a vSwitch fat tree (Paper V's simulations).

The simulation runs in Rust (lanes_fabric::migsim); this module builds its options, then writes
steps.csv (one row per migration), snapshots.csv (routing quality every X % of the moves),
summary.json and migsim.png.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import warnings
from pathlib import Path
from typing import Any

from lanes.errors import LanesError
from lanes.fabric import native
from lanes.fabric.cli_args import topology_spec

STEP_FIELDS = [
    "step",
    "vm",
    "from",
    "to",
    "same_leaf",
    "smps",
    "switches_updated",
    "vswitch_smps",
    "marking_ms",
    "rebalance_smps",
    "cumulative_smps",
]


def _snapshot_rows(snaps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for s in snaps:
        rows.append(
            {
                "step": s["step"],
                "percent": round(s["percent"], 2),
                "bisect_current": round(s["current"]["bisect"], 5),
                "bisect_rebalanced": round(s["rebalanced"]["bisect"], 5),
                "max_routes_per_link_current": s["current"]["max_routes_per_link"],
                "max_routes_per_link_rebalanced": s["rebalanced"]["max_routes_per_link"],
                "rebalance_smps": s["rebalance_smps"],
                "deadlock_free": s["deadlock_free"],
                "unreachable": s["unreachable"],
            }
        )
    return rows


def _write_csv(path: Path, rows: list[dict[str, Any]], fields: list[str]) -> None:
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def _plot(path: Path, r: dict[str, Any], title: str) -> None:
    import matplotlib

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.8))
    steps = [s["step"] for s in r["steps"]]
    a1.plot(steps, [s["smps"] for s in r["steps"]], linewidth=0.8, label="per migration")
    a1.set_xlabel("migration")
    a1.set_ylabel("physical SMPs per migration")
    a1b = a1.twinx()
    a1b.plot(steps, [s["cumulative_smps"] for s in r["steps"]], color="tab:red", label="cumulative")
    a1b.set_ylabel("cumulative SMPs", color="tab:red")
    a1.set_title("SMPs", fontsize=9)
    a1.grid(alpha=0.3)
    pct = [s["percent"] for s in r["snapshots"]]
    a2.plot(
        pct,
        [s["current"]["bisect"] for s in r["snapshots"]],
        marker="o",
        label=f"tables in place ({r['mode']})",
    )
    a2.plot(
        pct,
        [s["rebalanced"]["bisect"] for s in r["snapshots"]],
        marker="s",
        label="re-balanced (fresh vswitch-ftree)",
    )
    a2.set_xlabel("migrations done (%)")
    a2.set_ylabel("effective bisection bandwidth")
    a2.set_title("routing quality (bisect)", fontsize=9)
    a2.grid(alpha=0.3)
    a2.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _tree_name(spec: dict[str, Any]) -> str:
    if spec["kind"] == "named":
        return str(spec["name"])
    if spec["kind"] == "kary":
        return f"{spec['k']}-ary-{spec['n']}-tree"
    return f"{spec['kind'].upper()}({len(spec['m'])};{','.join(map(str, spec['m']))};{','.join(map(str, spec['w']))})"


def cmd_migsim(args: argparse.Namespace) -> int:
    if not 0 < args.population <= 1:
        raise LanesError(f"--population must be in (0, 1], got {args.population}")
    if args.pattern == "to-uniform" and args.initial == "uniform":
        raise LanesError("to-uniform starts from a random distribution (--initial random)")
    opts: dict[str, Any] = {
        "vfs": args.vfs_per_hv,
        "population": args.population,
        "initial": args.initial,
        "pattern": args.pattern,
        "mode": args.mode,
        "rebalance_every": args.rebalance_every,
        "snapshot_percent": args.snapshot_percent,
        "bisect_runs": args.bisect_runs,
        "seed": args.seed,
        "progress": not args.json,
        "hv_lid": args.hv_lid,
    }
    if args.migrations is not None:
        opts["migrations"] = args.migrations
    spec = topology_spec(args)
    print(
        f"fabric migsim: {args.pattern} from {args.initial}, {args.population:.0%} of VFs, {args.mode} ...",
        file=sys.stderr,
    )
    r = native.migsim(spec, opts)
    title = (
        f"{_tree_name(spec)}: {r['hypervisors']} hypervisors, {r['vms']} VMs, "
        f"{r['initial']} -> {r['pattern']}, {r['mode']}, {'re-balance every ' + str(r['rebalance_every']) if r['rebalance_every'] else 'no re-balancing'}, "
        f"seed {r['seed']}"
    )
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        _write_csv(out / "steps.csv", r["steps"], STEP_FIELDS)
        snaps = _snapshot_rows(r["snapshots"])
        _write_csv(out / "snapshots.csv", snaps, list(snaps[0]) if snaps else [])
        summary = {k: v for k, v in r.items() if k != "steps"}
        summary["spec"] = spec
        (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        if not args.no_plot:
            _plot(out / "migsim.png", r, title)
    first, last = r["snapshots"][0], r["snapshots"][-1]
    lines = [
        title,
        (
            f"{r['migrations']} migrations ({r['intra_leaf']} inside a leaf): {r['smps_total']} SMPs to "
            f"{r['physical_switches']} physical switches (mean {r['smps_mean']:.1f}, max {r['smps_max']}, "
            f"switches updated mean {r['switches_updated_mean']:.1f}; a full reconfiguration is "
            f"{r['full_reconfiguration_smps']}), {r['vswitch_smps_total']} to hypervisors"
        ),
        f"re-balances: {r['rebalances']}, {r['rebalance_smps_total']} SMPs",
        (
            f"bisect bandwidth: start {first['current']['bisect']:.3f}, end {last['current']['bisect']:.3f} "
            f"in place vs {last['rebalanced']['bisect']:.3f} re-balanced (would cost {last['rebalance_smps']} SMPs); "
            f"max routes per link {last['current']['max_routes_per_link']} vs "
            f"{last['rebalanced']['max_routes_per_link']}"
        ),
        f"every snapshot deadlock free: {all(s['deadlock_free'] for s in r['snapshots'])}",
    ]
    if args.out:
        lines.append(
            f"wrote {args.out}/steps.csv, snapshots.csv, summary.json"
            + ("" if args.no_plot else ", migsim.png")
        )
    if args.json:
        print(json.dumps({k: v for k, v in r.items() if k != "steps"}, indent=2))
    else:
        print("\n".join(lines))
    return 0 if all(s["deadlock_free"] and s["unreachable"] == 0 for s in r["snapshots"]) else 1


def register(sub: Any) -> None:
    m = sub.add_parser(
        "migsim",
        help="simulate sequences of VM migrations on a vSwitch fat tree (Paper V): SMPs, routing quality",
    )
    m.add_argument("kind", choices=["xgft", "pgft", "kary", "named"], help="physical tree, as for gen")
    m.add_argument("--h", type=int)
    m.add_argument("--m", type=lambda t: [int(x) for x in t.split(",")])
    m.add_argument("--w", type=lambda t: [int(x) for x in t.split(",")])
    m.add_argument("--p", type=lambda t: [int(x) for x in t.split(",")])
    m.add_argument("--k", type=int)
    m.add_argument("--n", type=int)
    m.add_argument("--name")
    m.add_argument("--radix", type=int)
    m.add_argument("--vfs-per-hv", type=int, default=4, help="VFs per hypervisor (Paper V: 4)")
    m.add_argument("--population", type=float, default=0.25, help="share of VFs with a VM: 0.25, 0.5, 0.75")
    m.add_argument("--initial", choices=["uniform", "random"], default="uniform")
    m.add_argument("--pattern", choices=["random", "consolidate", "grouping", "to-uniform"], default="random")
    m.add_argument("--migrations", type=int, help="moves of the random pattern (default 2 x hypervisors)")
    m.add_argument(
        "--mode", choices=["copy", "min-copy"], default="min-copy", help="copy = ItRC, min-copy = FTreeMinRC"
    )
    m.add_argument("--rebalance-every", type=int, default=0, help="re-route with vswitch-ftree every N moves")
    m.add_argument(
        "--snapshot-percent", type=float, default=10.0, help="routing quality every X %% of the moves"
    )
    m.add_argument("--bisect-runs", type=int, default=200, help="random bisect pairings per snapshot")
    m.add_argument(
        "--hv-lid", choices=["own", "shared"], default="own", help="hypervisor LID: its own or the PF's"
    )
    m.add_argument("--seed", type=int, default=1)
    m.add_argument("--out", help="directory for steps.csv, snapshots.csv, summary.json, migsim.png")
    m.add_argument("--no-plot", action="store_true")
    m.add_argument("--json", action="store_true")
    m.set_defaults(func=cmd_migsim, vfs=None, vms=None)
