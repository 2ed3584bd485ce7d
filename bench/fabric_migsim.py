"""Paper V's migration simulations with `lanes fabric migsim`: the six trees of its Table 4, the
seven scenarios of its Fig. 8 (b)-(h) plus random migrations, LID copy (ItRC) against FTreeMinRC
(min-copy); per run the SMPs per migration and the effective bisection bandwidth of the tables in
place against a fresh vswitch-ftree at the end (the re-balance's gain), and one run with periodic
re-balancing. Prints markdown rows.

    python bench/fabric_migsim.py [--trees 4-2-1-full,...] [--bisect-runs 200] [--seed 1]
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from lanes.fabric import native

TREES = {
    "4-2-1-full": {"kind": "named", "name": "4-2-1-full"},
    "8-ary-2": {"kind": "kary", "k": 8, "n": 2},
    "4-3-1-full": {"kind": "named", "name": "4-3-1-full"},
    "16-ary-2": {"kind": "kary", "k": 16, "n": 2},
    "8-ary-3": {"kind": "kary", "k": 8, "n": 3},
    "8-3-1-full": {"kind": "named", "name": "8-3-1-full"},
}
# (figure, initial, pattern, population)
SCENARIOS = [
    ("8b", "random", "grouping", 0.25),
    ("8c", "random", "to-uniform", 0.25),
    ("8d", "uniform", "random", 0.25),
    ("8e", "random", "consolidate", 0.5),
    ("8f", "uniform", "consolidate", 0.5),
    ("8g", "random", "to-uniform", 0.75),
    ("8h", "uniform", "random", 0.75),
]


def run(
    spec: dict[str, Any], initial: str, pattern: str, pop: float, mode: str, args: Any, every: int = 0
) -> dict:
    opts = {
        "vfs": 4,
        "population": pop,
        "initial": initial,
        "pattern": pattern,
        "mode": mode,
        "rebalance_every": every,
        "snapshot_percent": 10,
        "bisect_runs": args.bisect_runs,
        "seed": args.seed,
        "progress": False,
    }
    t0 = time.monotonic()
    r = native.migsim(spec, opts)
    r["wall"] = time.monotonic() - t0
    assert all(s["deadlock_free"] and s["unreachable"] == 0 for s in r["snapshots"])
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", default=",".join(TREES))
    ap.add_argument("--bisect-runs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    print(
        "| tree | fig. | scenario | VMs | moves | ItRC SMPs mean / max | FTreeMinRC SMPs mean / max | "
        "min-copy switches mean | bisect start | bisect end, in place | bisect end, re-balanced | gain | "
        "worst gain (snapshot) | s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.trees.split(","):
        spec = TREES[name]
        for fig, initial, pattern, pop in SCENARIOS:
            print(f"bench: {name} {fig} {initial}->{pattern} {pop:.0%} ...", file=sys.stderr)
            c = run(spec, initial, pattern, pop, "copy", args)
            m = run(spec, initial, pattern, pop, "min-copy", args)
            first, last = m["snapshots"][0], m["snapshots"][-1]
            gains = [s["rebalanced"]["bisect"] / s["current"]["bisect"] - 1 for s in m["snapshots"]]
            end_gain = last["rebalanced"]["bisect"] / last["current"]["bisect"] - 1
            print(
                f"| {name} | {fig} | {initial} -> {pattern}, {pop:.0%} | {m['vms']} | {m['migrations']} | "
                f"{c['smps_mean']:.1f} / {c['smps_max']} | {m['smps_mean']:.1f} / {m['smps_max']} | "
                f"{m['switches_updated_mean']:.1f} of {m['physical_switches']} | {first['current']['bisect']:.3f} | "
                f"{last['current']['bisect']:.3f} | {last['rebalanced']['bisect']:.3f} | {end_gain:+.1%} | "
                f"{max(gains):+.1%} | {c['wall'] + m['wall']:.1f} |",
                flush=True,
            )
    # Periodic re-balancing on the largest tree, uniform -> random at 75 %.
    name = args.trees.split(",")[-1]
    print(f"\nperiodic re-balancing, {name}, uniform -> random, 75 %, min-copy:\n")
    print(
        "| re-balance every | moves | migration SMPs | re-balance SMPs | total SMPs | bisect end | worst bisect |"
    )
    print("|---|---|---|---|---|---|---|")
    for every in (0, 512, 128):
        r = run(TREES[name], "uniform", "random", 0.75, "min-copy", args, every)
        bis = [s["current"]["bisect"] for s in r["snapshots"]]
        print(
            f"| {every or 'never'} | {r['migrations']} | {r['smps_total']} | {r['rebalance_smps_total']} | "
            f"{r['smps_total'] + r['rebalance_smps_total']} | {bis[-1]:.3f} | {min(bis):.3f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
