"""Paths modified after a first link failure by OpenSM 3.3.23's own ftree on ibsim, the baseline
Paper IV's simulations used: OpenSM routes the intact tree and then, for each switch-to-switch link
(or a sample), the tree without that link, with root/CN GUID files (without them its ftree refuses
a tree with a missing link and min-hop routes); routes are traced through its dumps and compared
with the intact tree's. Prints the mean modified paths per bisect run (exact expectation: every flow
of a bisect run is a uniform ordered pair) and writes the raw results as JSON.

    python bench/fabric_paths_modified_opensm.py [--trees 16-ary-2,16-ary-2-oversub-2] [--sample 0]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lanes.fabric import counters, native, opensm
from lanes.fabric.dumproutes import links, route, tables

TREES = {
    "8-ary-2": {"kind": "kary", "k": 8, "n": 2},
    "16-ary-2": {"kind": "kary", "k": 16, "n": 2},
    "16-ary-2-oversub-2": {"kind": "xgft", "m": [32, 16], "w": [1, 16]},
    "xgft-16-32-1-8": {"kind": "xgft", "m": [16, 32], "w": [1, 8]},
}


def osm_ftree(net: str, d: Path) -> dict[str, Any]:
    g = native.guid_files(net, str(d / "guids"), [])
    r = opensm.run(
        net,
        "ftree",
        str(d),
        timeout=600,
        traces=0,
        extra_args=["-a", g["root_guid_file"], "-u", g["cn_guid_file"]],
    )
    if r.get("engine_used") != "ftree" or "lfts_dump" not in r:
        raise SystemExit(f"OpenSM did not route {net} with ftree: {r.get('fallback') or r.get('error')}")
    return r


def routes(
    net: str, dump: str, sources: dict[str, str], dsts: list[tuple[str, int]]
) -> dict[tuple[str, str], tuple[str, ...]]:
    """(source leaf's first node, destination) -> route, one source node per leaf (the route from a
    leaf does not depend on which of its nodes sends)."""
    net_links, lfts = links(net), tables(dump)
    return {
        (leaf, d): tuple(route(net_links, lfts, src, lid)) for leaf, src in sources.items() for d, lid in dsts
    }


def one_tree(name: str, sample: int, seed: int, work: Path) -> dict[str, Any]:
    work.mkdir(parents=True)
    net = str(work / "t.net")
    native.gen(TREES[name], net)
    hosts = counters.hosts_from_netlist(Path(net).read_text())
    dsts = sorted(((n, lid) for lid, n in hosts.items()), key=lambda x: x[1])
    net_links = links(net)
    leaf_of = {n: net_links[(n, 1)] for n, _ in dsts}
    sources: dict[str, str] = {}
    for n, _ in dsts:
        sources.setdefault(leaf_of[n], n)
    base = routes(net, osm_ftree(net, work / "intact")["lfts_dump"], sources, dsts)
    leaves = set(leaf_of.values())
    isl = sorted(
        {(a, p) for (a, p), b in net_links.items() if a in leaves and b.startswith("s") and b not in leaves}
    )
    chosen = random.Random(seed).sample(isl, sample) if 0 < sample < len(isl) else isl
    n = len(dsts)
    per_link = []
    for i, (sw, port) in enumerate(chosen):
        if i % 32 == 0:
            print(f"bench: {name} {i}/{len(chosen)} links ...", file=sys.stderr)
        d = work / f"link-{i}"
        d.mkdir(parents=True)
        native.fail(net, {"links": [f"{sw}[{port}]"], "engine": "ftree", "out_net": str(d / "degraded.net")})
        new = routes(
            str(d / "degraded.net"), osm_ftree(str(d / "degraded.net"), d)["lfts_dump"], sources, dsts
        )
        changed = sum(
            1 for s, _ in dsts for t, _ in dsts if s != t and base[(leaf_of[s], t)] != new[(leaf_of[s], t)]
        )
        per_link.append({"link": f"{sw}[{port}]", "pairs_changed": changed})
    flows = n - n % 2
    total = sum(x["pairs_changed"] for x in per_link)
    return {
        "spec": TREES[name],
        "nodes": n,
        "links_failed": len(chosen),
        "links_in_tree": len(isl),
        "flows_per_run": flows,
        "pairs_changed": total,
        "paths_expected": total / len(chosen) / (n * (n - 1)) * flows,
        "per_link": per_link,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", default="16-ary-2,16-ary-2-oversub-2,xgft-16-32-1-8")
    ap.add_argument("--sample", type=int, default=0, help="links per tree (0: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="bench/results/fabric_paths_modified_opensm.json")
    args = ap.parse_args()
    for t in opensm.missing_tools():
        raise SystemExit(f"not installed: {t} (run make setup)")
    work = Path(tempfile.mkdtemp(prefix="lanes-pathsmod-osm-"))
    raw: dict[str, Any] = {
        "command": " ".join(["python", *sys.argv]),
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "trees": {},
    }
    print("| tree | nodes | links failed | OpenSM ftree: paths modified per bisect run (exact) |")
    print("|---|---|---|---|")
    for name in args.trees.split(","):
        r = one_tree(name, args.sample, args.seed, work / name)
        raw["trees"][name] = r
        print(
            f"| {name} | {r['nodes']} | {r['links_failed']} of {r['links_in_tree']} | {r['paths_expected']:.2f} |",
            flush=True,
        )
    Path(args.out).write_text(json.dumps(raw, indent=1) + "\n")
    print(f"raw: {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
