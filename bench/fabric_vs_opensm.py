"""lanes fabric against OpenSM under ibsim, side by side: for each fabric, our ftree routing time and
OpenSM's own ftree routing time (from its log) in the same run, whether the balance (destinations per
port per level and direction) is equal, and whether OpenSM loads our tables (-R file -U) unchanged
with ibtracert following them. Prints one Markdown table row per fabric.

    python bench/fabric_vs_opensm.py [--big] [--out DIR]

--big adds the thesis's 11664-node / 1620-switch tree (OpenSM needs about 5 minutes on it here).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from lanes.fabric import native, opensm

FABRICS: list[tuple[str, dict]] = [
    ("4-ary-3-tree", {"kind": "kary", "k": 4, "n": 3}),
    ("XGFT(2;12,6;1,3) 2:1", {"kind": "xgft", "m": [12, 6], "w": [1, 3]}),
    ("XGFT(3;8,4,4;1,4,2)", {"kind": "xgft", "m": [8, 4, 4], "w": [1, 4, 2]}),
    ("XGFT(3;4,4,3;1,2,3)", {"kind": "xgft", "m": [4, 4, 3], "w": [1, 2, 3]}),
    ("PGFT(3;6,3,2;1,3,2;1,1,2)", {"kind": "pgft", "m": [6, 3, 2], "w": [1, 3, 2], "p": [1, 1, 2]}),
    ("18-2-1-full (648)", {"kind": "named", "name": "18-2-1-full"}),
    ("8-3-2-half (1024)", {"kind": "named", "name": "8-3-2-half"}),
]
BIG = [("18-3-1-full (11664)", {"kind": "named", "name": "18-3-1-full"})]


def one(name: str, spec: dict, work: Path) -> str:
    d = work / name.split()[0].replace("(", "").replace(";", "_").replace(",", "-")
    d.mkdir(parents=True, exist_ok=True)
    net = str(d / "f.net")
    native.gen(spec, net)
    print(f"bench: {name}: routing ...", file=sys.stderr)
    ours = native.route(net, "ftree", str(d / "ours.dump"), {"check": True})
    theirs = opensm.run(net, "ftree", str(d / "osm"), timeout=1800, traces=4, compare=False)
    mine = native.balance(net, str(d / "ours.dump"))
    equal = mine["levels"] == theirs["balance"]["levels"]
    t0 = time.monotonic()
    loaded = opensm.run(net, "file", str(d / "file"), timeout=1800, lfts=str(d / "ours.dump"), traces=8)
    load_s = time.monotonic() - t0
    traces = sum(t["ok"] for t in loaded["traces"])
    return (
        f"| {name} | {ours['compute_nodes']} / {ours['switches']} | {ours['seconds'] * 1000:.1f} | "
        f"{theirs['routing_seconds'] * 1000:.1f} | {equal} | {ours['check']['deadlock_free']} | "
        f"{loaded['loaded_vs_ours']['entries']} | {traces}/{len(loaded['traces'])} | {load_s:.0f} |"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--big", action="store_true", help="add the 11664-node tree")
    ap.add_argument("--out", help="work directory (default: a temporary one)")
    args = ap.parse_args()
    if opensm.missing_tools():
        print(f"not installed: {', '.join(opensm.missing_tools())}", file=sys.stderr)
        return 1
    work = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="lanes-fabric-bench-"))
    print(
        "| fabric | nodes / switches | lanes ftree ms | OpenSM ftree ms | balance equal | deadlock free "
        "| entries differing after -U | ibtracert ok | -U run s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, spec in FABRICS + (BIG if args.big else []):
        print(one(name, spec, work), flush=True)
    print(json.dumps({"work": str(work)}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
