"""Initial routing time (no tables in place) of ftree, SlimUpdate and Paper IV's SlimUpdate with its
balancing counters (slimupdate-paper) on k-ary-n-trees of 16 to 4096 nodes: the quantity of Paper
IV's Table 3. Median of --repeat runs of the routing function alone (no check, no file I/O), as
bench/fabric_metabase.py counts it. Prints markdown rows; --json writes every run.

    python bench/fabric_initial_routing.py [--repeat 5] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lanes.fabric import native

TREES = [(4, 2), (8, 2), (16, 2), (8, 3), (16, 3)]  # 16, 64, 256, 512, 4096 nodes
ENGINES = ["ftree", "slimupdate", "slimupdate-paper"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", help="write every run here")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lanes-init-route-"))
    out: dict = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "loadavg_start": os.getloadavg(),
        "repeat": args.repeat,
        "rows": [],
    }
    print("| tree | nodes | " + " | ".join(f"{e} ms" for e in ENGINES) + " |")
    print("|---|---|" + "---|" * len(ENGINES))
    for k, n in TREES:
        net = str(work / f"{k}-ary-{n}.net")
        g = native.gen({"kind": "kary", "k": k, "n": n}, net)
        print(f"bench: {k}-ary-{n} ...", file=sys.stderr)
        row: dict = {"tree": f"{k}-ary-{n}", "nodes": g["nodes"], "ms": {}}
        for e in ENGINES:
            row["ms"][e] = [
                native.route(net, e, "/dev/null", {"check": False})["seconds"] * 1000
                for _ in range(args.repeat)
            ]
        out["rows"].append(row)
        cells = " | ".join(f"{statistics.median(row['ms'][e]):.2f}" for e in ENGINES)
        print(f"| {k}-ary-{n} | {g['nodes']} | {cells} |", flush=True)
    out["loadavg_end"] = os.getloadavg()
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
