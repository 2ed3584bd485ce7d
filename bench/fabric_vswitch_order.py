"""Two tables for bench/results/fabric.md:

1. VM migrations on vSwitch fat trees of 36-port switches (Paper II Table I): SMPs of LID swap and
   LID copy (min / mean / max over random migrations) against the bound (2n resp. n) and a full
   reconfiguration, and what re-routing with vswitch-ftree would send instead.
2. Paper IV node orders: effective bandwidth of ftree vs SlimUpdate by node order.

    python bench/fabric_vswitch_order.py [--migrations N] [--runs N]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

from lanes.fabric import native


def migrations(name: str, count: int, work: Path, rng: random.Random) -> list[str]:
    net, dump = str(work / f"{name}.net"), str(work / f"{name}.dump")
    # 2 VFs per hypervisor; even hypervisors have both VF LIDs populated (vm-1 plays the idle,
    # prepopulated VF of LID swap), odd ones one VM and a free VF port (the target of LID copy).
    g = native.gen({"kind": "named", "name": name, "vfs": 2, "vms": [2, 1]}, net)
    native.route(net, "vswitch-ftree", dump, {"check": False})
    hvs = g["vswitch"]["hypervisors"]
    rows = []
    for mode in ("swap", "copy"):
        smps, rer = [], []
        bound = full = 0
        print(f"bench: {name} {mode} x{count} ...", file=sys.stderr)
        for _ in range(count):
            if mode == "swap":
                # VM hv-<even>-vm-0 swaps with VF hv-<other even>-vm-1 (a prepopulated idle VF).
                a, b = rng.sample(range(0, hvs, 2), 2)
                vm, to = f"hv-{a}-vm-0", f"hv-{b}-vm-1"
            else:
                a = rng.randrange(0, hvs, 2)
                b = rng.randrange(1, hvs, 2)
                vm, to = f"hv-{a}-vm-0", f"hv-{b}"
            r = native.migrate(net, dump, {"vm": vm, "to": to, "mode": mode, "compare": True})
            smps.append(r["smps"])
            rer.append(r["reroute_vswitch_ftree"]["blocks"])
            bound, full = r["max_smps"], r["full_reconfiguration_smps"]
            assert r["check"]["deadlock_free"]
        rows.append(
            f"| {name} + vSwitch ({hvs} hypervisors) | {mode} | {min(smps)} / {sum(smps) / len(smps):.1f} / "
            f"{max(smps)} | {bound} | {full} | {sum(rer) / len(rer):.0f} |"
        )
    return rows


def orders(runs: int, work: Path) -> list[str]:
    trees = [
        ("4-ary-2", {"kind": "kary", "k": 4, "n": 2}),
        ("8-ary-2", {"kind": "kary", "k": 8, "n": 2}),
        ("6-ary-3", {"kind": "kary", "k": 6, "n": 3}),
        ("8-ary-3", {"kind": "kary", "k": 8, "n": 3}),
        ("8-ary-2, 2:1", {"kind": "xgft", "m": [16, 8], "w": [1, 8]}),
        ("8-ary-3, 4:1", {"kind": "xgft", "m": [32, 8, 8], "w": [1, 8, 8]}),
    ]
    rows = []
    for name, spec in trees:
        net = str(work / f"order-{len(rows)}.net")
        native.gen(spec, net)
        for pattern in ("bruck", "recdbl", "2-neighbor"):
            cells = []
            for placement in ("random", "leaf-blocks"):
                print(f"bench: order study {name} {pattern} {placement} ...", file=sys.stderr)
                r = native.order_study(
                    net, {"pattern": pattern, "placement": placement, "runs": runs, "seed": 1}
                )
                cells.append(
                    f"{r['ftree']['bandwidth_mean']:.3f} | {r['slimupdate_by_order']['bandwidth_mean']:.3f}"
                )
            rows.append(f"| {name} ({r['nodes']}) | {pattern} | {cells[0]} | {cells[1]} |")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--migrations", type=int, default=20)
    ap.add_argument("--runs", type=int, default=1000)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lanes-fabric-vs-"))
    rng = random.Random(1)
    print("| fabric | mode | SMPs min / mean / max | bound | full RC | re-route SMPs (mean) |")
    print("|---|---|---|---|---|---|")
    for name in ("18-2-1-half", "18-2-1-full"):
        for row in migrations(name, args.migrations, work, rng):
            print(row, flush=True)
    print()
    print(
        "| tree (nodes) | pattern | random: ftree | random: SlimUpdate | leaf-blocks: ftree | leaf-blocks: SlimUpdate |"
    )
    print("|---|---|---|---|---|---|")
    for row in orders(args.runs, work):
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
