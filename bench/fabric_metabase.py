"""Metabase-aided routing (Paper IV's mFatTree) against ftree: routing time of ftree, of mfattree's
first run (phase I + II), and of phase II alone from a saved metabase (`lanes fabric route --engine
mfattree --metabase-in FILE`), with one path per node slot (equal to ftree's tables) and with the
leaves' nodes sharing the disjoint paths (`--metabase-paths disjoint`, as the paper's mFatTree does
on oversubscribed trees). Median of --repeat runs, routing function only (no file I/O), as the
paper counts it. Prints markdown rows.

    python bench/fabric_metabase.py [--trees 16-ary-2,...] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from lanes.fabric import native

TREES = {
    "16-ary-2": ({"kind": "kary", "k": 16, "n": 2}, "256 nodes: mFatTree 1.96 ms, ftree 1.25 ms"),
    "8-ary-3": ({"kind": "kary", "k": 8, "n": 3}, "-"),
    "12-ary-3": ({"kind": "kary", "k": 12, "n": 3}, "-"),
    "16-ary-3": ({"kind": "kary", "k": 16, "n": 3}, "4096: mFatTree 979.3, ftree 987.5, phase II 150.8 ms"),
    "16-3-2-half": ({"kind": "named", "name": "16-3-2-half"}, "8192, 2:1: mFatTree 1301, ftree 2420 ms"),
    "16-3-4-half": ({"kind": "named", "name": "16-3-4-half"}, "16384, 4:1: mFatTree 1945, ftree 5827 ms"),
}


def ms(net: str, engine: str, opts: dict, repeat: int) -> tuple[float, dict]:
    times, last = [], {}
    for _ in range(repeat):
        last = native.route(net, engine, "/dev/null", {"check": False, **opts})
        times.append(last["seconds"] * 1000)
    return statistics.median(times), last


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", default=",".join(TREES))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lanes-mb-"))
    print(
        "| tree | nodes | paper (ms) | ftree ms | mfattree first run ms | phase II only ms | saving vs ftree | "
        "shared paths per leaf | shared: first run ms | shared: phase II ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.trees.split(","):
        spec, paper = TREES[name]
        net = str(work / f"{name}.net")
        g = native.gen(spec, net)
        print(f"bench: {name} ...", file=sys.stderr)
        ft, _ = ms(net, "ftree", {}, args.repeat)
        mb = str(work / f"{name}.mb")
        sh = str(work / f"{name}.shared.mb")
        first, _ = ms(net, "mfattree", {"metabase_out": mb}, args.repeat)
        second, r2 = ms(net, "mfattree", {"metabase_in": mb}, args.repeat)
        assert r2.get("phase_ii_only")
        sfirst, r3 = ms(net, "mfattree", {"metabase_out": sh, "metabase_paths": "disjoint"}, args.repeat)
        ssecond, _ = ms(net, "mfattree", {"metabase_in": sh}, args.repeat)
        print(
            f"| {name} | {g['nodes']} | {paper} | {ft:.1f} | {first:.1f} | {second:.1f} | "
            f"{1 - second / ft:.0%} | {r3['metabase_paths_per_leaf']} | {sfirst:.1f} | {ssecond:.1f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
