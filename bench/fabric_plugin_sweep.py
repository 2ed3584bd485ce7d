"""OpenSM routing a subnet with lanes (the plugin, -R lanes-ftree) against OpenSM's own ftree, same
fabric, same ibsim: time from the start of routing to "tables configured on all switches" in
OpenSM's log, and for lanes the plugin's own split (reading the subnet + routing, deadlock check,
handing the tables and hop counts back). One Markdown row per fabric.

    python bench/fabric_plugin_sweep.py [--big] [--out DIR]

--big adds the 11,664-node tree (each OpenSM run takes a few minutes here, discovery included).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from lanes.fabric import native, opensm

FABRICS = [
    ("4-ary-3-tree", {"kind": "kary", "k": 4, "n": 3}),
    ("18-2-1-full", {"kind": "named", "name": "18-2-1-full"}),
    ("8-3-2-half", {"kind": "named", "name": "8-3-2-half"}),
]
BIG = [("18-3-1-full", {"kind": "named", "name": "18-3-1-full"})]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--big", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args()
    work = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="lanes-plugin-bench-"))
    print(
        "| fabric | nodes / switches | OpenSM ftree s | OpenSM + lanes-ftree s | lanes: read + route s "
        "| check s | hand back s | balance equal | deadlock free |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, spec in FABRICS + (BIG if args.big else []):
        d = work / name
        d.mkdir(parents=True, exist_ok=True)
        net = str(d / "f.net")
        s = native.gen(spec, net)
        print(f"bench: {name}: OpenSM ftree, then lanes-ftree ...", file=sys.stderr)
        theirs = opensm.run(net, "ftree", str(d / "ftree"), timeout=3600, traces=0)
        ours = opensm.run(net, "lanes-ftree", str(d / "lanes"), timeout=3600, traces=4)
        run = ours["lanes_routings"][0]
        lanes = run["lanes"]
        same = theirs["balance"]["levels"] == ours["balance"]["levels"]
        print(
            f"| {name} | {s['nodes']} / {s['switches']} | {theirs['routing_seconds']:.3f} | "
            f"{ours['routing_seconds']:.3f} | {lanes['routing_seconds']:.3f} | {lanes.get('check_seconds', 0):.3f} | "
            f"{run['copy_seconds']:.3f} | {same} | {ours['check']['deadlock_free']} |",
            flush=True,
        )
    print(json.dumps({"work": str(work)}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
