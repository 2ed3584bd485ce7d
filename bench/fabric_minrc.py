"""VM migration by LID copy with minimal reconfiguration (FTreeMinRC) against a plain LID copy, on
vSwitch fat trees of 36-port switches: SMPs to the physical switches (min / mean / max over random
migrations within one leaf and across leaves) and the time to mark the switches to update.

    python bench/fabric_minrc.py [--migrations N] [--trees 18-2-1-half,18-2-1-full]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

from lanes.fabric import native


def rows_for(name: str, count: int, work: Path, rng: random.Random) -> list[str]:
    net, dump = str(work / f"{name}.net"), str(work / f"{name}.dump")
    # 2 VFs per hypervisor; even hypervisors run one VM, odd ones one VM and a free VF (the target).
    g = native.gen({"kind": "named", "name": name, "vfs": 2, "vms": [1, 1]}, net)
    native.route(net, "vswitch-ftree", dump, {"check": False})
    hvs, per_leaf = g["vswitch"]["hypervisors"], 18
    out = []
    for scope in ("intra-leaf", "inter-leaf"):
        moves = []
        for _ in range(count):
            leaf = rng.randrange(hvs // per_leaf)
            a = leaf * per_leaf + 2 * rng.randrange(per_leaf // 2)
            if scope == "intra-leaf":
                b = leaf * per_leaf + 2 * rng.randrange(per_leaf // 2) + 1
            else:
                other = (leaf + 1 + rng.randrange(hvs // per_leaf - 1)) % (hvs // per_leaf)
                b = other * per_leaf + 2 * rng.randrange(per_leaf // 2) + 1
            moves.append((f"hv-{a}-vm-0", f"hv-{b}"))
        for mode in ("copy", "min-copy"):
            print(f"bench: {name} {scope} {mode} x{count} ...", file=sys.stderr)
            smps, marks = [], []
            for vm, to in moves:
                r = native.migrate(net, dump, {"vm": vm, "to": to, "mode": mode, "compare": False})
                assert r["check"]["deadlock_free"] and r["check"]["unreachable"] == 0, r["check"]
                smps.append(r["smps"])
                marks.append(r["marking_seconds"] * 1000)
                bound = r["max_smps"]
            mark = f"{sum(marks) / len(marks):.2f} / {max(marks):.2f}" if mode == "min-copy" else "-"
            out.append(
                f"| {name} + vSwitch ({hvs} hypervisors) | {scope} | {mode} | {min(smps)} / "
                f"{sum(smps) / len(smps):.1f} / {max(smps)} | {bound} | {mark} |"
            )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--migrations", type=int, default=20)
    ap.add_argument("--trees", default="18-2-1-half,18-2-1-full")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lanes-minrc-"))
    rng = random.Random(args.seed)
    print("| fabric | migration | mode | physical SMPs min / mean / max | bound n | marking ms mean / max |")
    print("|---|---|---|---|---|---|")
    for name in args.trees.split(","):
        for row in rows_for(name, args.migrations, work, rng):
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
