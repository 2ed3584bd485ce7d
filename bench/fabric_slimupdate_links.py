"""SlimUpdate against ftree after one failed leaf-to-spine link, over every such link of a tree (or a
random sample): LFT entries changed and SMPs (changed 64-LID blocks), summed over
the failures. Prints one markdown row per tree. With --shutdowns K: K compute nodes shut down one
after the other (each re-route starting from the tables the previous one left), over --runs random
sequences, entries and SMPs summed.

    python bench/fabric_slimupdate_links.py [--trees 16-ary-2,8-ary-2] [--sample N] [--seed 1]
    python bench/fabric_slimupdate_links.py --trees 16-ary-2 --shutdowns 10 --runs 20

--slim picks the SlimUpdate measured: slimupdate-paper (default, Paper IV's algorithm) or
slimupdate (lanes's: only the entries the failure broke change, Paper IV's when that cannot route).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

from lanes.fabric import native

TREES = {
    "8-ary-2": {"kind": "kary", "k": 8, "n": 2},
    "16-ary-2": {"kind": "kary", "k": 16, "n": 2},
    "16-ary-2-oversub-2": {"kind": "xgft", "m": [32, 16], "w": [1, 16]},
}


def shutdowns(name: str, k: int, runs: int, seed: int, work: Path, slim: str) -> None:
    spec = TREES[name]
    net, dump = str(work / "t.net"), str(work / "t.dump")
    g = native.gen(spec, net)
    native.route(net, "ftree", dump, {"check": False})
    rng = random.Random(seed)
    tot = {"ftree": [0, 0], "slimupdate": [0, 0]}
    for run in range(runs):
        print(f"bench: {name} shutdowns run {run + 1}/{runs} ...", file=sys.stderr)
        nodes = rng.sample([f"h-{i}" for i in range(g["nodes"])], k)
        for e, acc in tot.items():
            cur_net, cur = net, dump
            for i, node in enumerate(nodes):
                nn, nd = str(work / f"{e}-{i}.net"), str(work / f"{e}-{i}.dump")
                engine = slim if e == "slimupdate" else e
                r = native.fail(
                    cur_net, {"nodes": [node], "engine": engine, "old": cur, "out": nd, "out_net": nn}
                )
                assert r["check"]["deadlock_free"] and r["check"]["unreachable"] == 0
                acc[0] += r["transition"]["changed_entries"]
                acc[1] += r["smps"]
                cur_net, cur = nn, nd
    (fe, fs), (se, ss) = tot["ftree"], tot["slimupdate"]
    print(
        "| tree | shutdowns per run | runs | ftree entries | SlimUpdate entries | entries saved | ftree SMPs | "
        "SlimUpdate SMPs | SMPs saved |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    print(f"| {name} | {k} | {runs} | {fe} | {se} | {1 - se / fe:.1%} | {fs} | {ss} | {1 - ss / fs:.1%} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", default=",".join(TREES))
    ap.add_argument("--sample", type=int, default=0, help="links per tree (0: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--shutdowns", type=int, default=0, help="node shutdowns per run instead of link failures"
    )
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--slim", default="slimupdate-paper", choices=["slimupdate-paper", "slimupdate"])
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lanes-slim-"))
    if args.shutdowns:
        for name in args.trees.split(","):
            shutdowns(name, args.shutdowns, args.runs, args.seed, work, args.slim)
        return 0
    print(
        "| tree | links failed (one at a time) | ftree entries | SlimUpdate entries | entries saved | "
        "ftree SMPs | SlimUpdate SMPs | SMPs saved | failures where SMPs equal |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.trees.split(","):
        spec = TREES[name]
        net, dump = str(work / "t.net"), str(work / "t.dump")
        g = native.gen(spec, net)
        native.route(net, "ftree", dump, {"check": False})
        k = spec.get("k") or spec["m"][0]
        leaves = g["switches_per_level"][0]
        ups = g["switches_per_level"][1]
        links = [f"s1-{leaf}[{k + u + 1}]" for leaf in range(leaves) for u in range(ups)]
        if args.sample:
            links = random.Random(args.seed).sample(links, min(args.sample, len(links)))
        tot = {"ftree": [0, 0], "slimupdate": [0, 0]}
        equal = 0
        for i, link in enumerate(links):
            if i % 32 == 0:
                print(f"bench: {name} {i}/{len(links)} links ...", file=sys.stderr)
            smps = {}
            for e in ("ftree", "slimupdate"):
                engine = args.slim if e == "slimupdate" else e
                r = native.fail(net, {"links": [link], "engine": engine, "old": dump})
                assert r["check"]["deadlock_free"] and r["check"]["unreachable"] == 0
                tot[e][0] += r["transition"]["changed_entries"]
                tot[e][1] += r["smps"]
                smps[e] = r["smps"]
            equal += smps["ftree"] == smps["slimupdate"]
        (fe, fs), (se, ss) = tot["ftree"], tot["slimupdate"]
        print(
            f"| {name} | {len(links)} | {fe} | {se} | {1 - se / fe:.1%} | {fs} | {ss} | {1 - ss / fs:.1%} | "
            f"{equal} of {len(links)} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
