"""Paths modified after a first link failure, Paper IV's measure beside the LFT-entries one: every
switch-to-switch link of a tree fails in turn and is re-routed by ftree and by SlimUpdate (both from
lanes's ftree tables of the intact tree); then --runs random runs each draw one failed link and one
bisect pattern and count the pattern's flows whose route changed. Writes the raw results as JSON
and prints one markdown row per tree and engine.

    python bench/fabric_paths_modified.py [--trees 3-ary-2,16-ary-2,...] [--runs 10000]
        [--out bench/results/fabric_paths_modified.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lanes.fabric import native

TREES = {
    "3-ary-2": {"kind": "kary", "k": 3, "n": 2},
    "8-ary-2": {"kind": "kary", "k": 8, "n": 2},
    "16-ary-2": {"kind": "kary", "k": 16, "n": 2},
    "16-ary-2-oversub-2": {"kind": "xgft", "m": [32, 16], "w": [1, 16]},
    # The other 512-node 2:1 two-level tree: 32 leaves of 16 nodes with 8 up links each.
    "xgft-16-32-1-8": {"kind": "xgft", "m": [16, 32], "w": [1, 8]},
}
ENGINES = ["ftree", "slimupdate-paper", "slimupdate-paper-intact", "slimupdate"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", default=",".join(TREES))
    ap.add_argument("--runs", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="bench/results/fabric_paths_modified.json")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lanes-pathsmod-"))
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    raw: dict = {
        "command": " ".join(["python", *sys.argv]),
        "commit": commit,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "trees": {},
    }
    print(
        "| tree | nodes | links | flows per run | engine | paths modified per run (mean, exact) | "
        "paths saved | LFT entries changed (all links) | entries saved | SMPs (all links) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.trees.split(","):
        net = str(work / f"{name}.net")
        native.gen(TREES[name], net)
        print(f"bench: {name} ...", file=sys.stderr)
        r = native.paths_modified(net, {"engines": ENGINES, "runs": args.runs, "seed": args.seed})
        raw["trees"][name] = {"spec": TREES[name], **r}
        base = r["engines"][0]
        for e in r["engines"]:
            saved = 1 - e["paths_mean"] / base["paths_mean"]
            esaved = 1 - e["entries_changed"] / base["entries_changed"]
            print(
                f"| {name} | {r['nodes']} | {r['links']} | {r['flows_per_run']} | {e['engine']} | "
                f"{e['paths_mean']:.2f} ({e['paths_expected']:.2f}); median {e['paths_median']}, max "
                f"{e['paths_max']} | {saved:.1%} | {e['entries_changed']} | {esaved:.1%} | {e['smps']} |",
                flush=True,
            )
    Path(args.out).write_text(json.dumps(raw, indent=1) + "\n")
    print(f"raw: {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
