"""Failures on a fat tree, lanes against OpenSM: a share of the switch-to-switch links fails at
random; lanes re-routes the degraded tree (ftree from scratch, SlimUpdate from the tables in place)
or the failure's sub-tree alone, widened until the check passes) and OpenSM 3.3.23 on ibsim routes the same degraded netlist with its ftree (which engine it ends up
using, and what lanes's check says of the tables it sent). One Markdown row per case.

    python bench/fabric_failures.py [--tree named:18-3-1-full] [--percent 1,2,5] [--seed 1]
        [--link s1-0[17]] [--switch NAME] [--node NAME] [--no-opensm] [--out DIR]

The 11,664-node tree takes OpenSM several minutes per run here (discovery on ibsim included).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lanes.fabric import native, opensm


def spec_of(text: str) -> dict[str, Any]:
    kind, _, rest = text.partition(":")
    if kind == "named":
        return {"kind": "named", "name": rest}
    if kind == "kary":
        k, n = rest.split(":")
        return {"kind": "kary", "k": int(k), "n": int(n)}
    raise SystemExit(f"bad --tree {text!r}: named:NAME or kary:K:N")


def verdict(c: dict[str, Any]) -> str:
    cdg = "acyclic" if c["cdg_acyclic"] else "CYCLIC"
    return f"{c['updown_violations']} / {cdg} / {c['unreachable']}"


def lanes_rows(net: str, case: dict[str, Any], d: Path) -> tuple[list[str], str]:
    rows, degraded = [], str(d / "degraded.net")
    for engine in ("ftree", "slimupdate", "subtree"):
        print(f"bench: lanes {engine} ...", file=sys.stderr)
        r = native.fail(net, {**case, "engine": engine, "out_net": degraded})
        worst = max(lv["max"] for lv in r["balance"]["levels"])
        note = r["transition"]["advice"]
        if "subtree" in r:
            st = r["subtree"]
            note += (
                f"; sub-tree {st['subtree_switches']} switches / {st['subtree_nodes']} nodes, "
                f"{st['attempts']} attempt(s), {st['rerouted_switches']} switches re-routed"
                + (", fell back to full ftree" if st["fell_back_to_full"] else "")
            )
        rows.append(
            f"lanes {engine} | {r['failures']['links_failed']} | {r['seconds']:.2f} | {r['smps']} of "
            f"{r['full_reconfiguration_smps']} | {verdict(r['without_reroute'])} | {verdict(r['check'])} | "
            f"{worst} | {note}"
        )
    return rows, degraded


def opensm_row(degraded: str, d: Path, roots: bool) -> str:
    extra: list[str] = []
    label = "OpenSM ftree"
    if roots:
        g = native.guid_files(degraded, str(d / "guids"), [])
        extra = ["-a", g["root_guid_file"], "-u", g["cn_guid_file"]]
        label += " + root/CN GUID files"
    t0 = time.monotonic()
    r = opensm.run(
        degraded,
        "ftree",
        str(d / ("osm-roots" if roots else "osm")),
        timeout=3600,
        traces=0,
        extra_args=extra,
    )
    wall = time.monotonic() - t0
    if "check" not in r:
        return f"{label} | - | - | - | - | {r.get('error', 'no tables')} | - | -"
    used = r.get("engine_used") or "?"
    refused = [e for e in r["log_errors"] if "ftree" in e.lower() or "fat" in e.lower()]
    worst = max((lv["max"] for lv in r["balance"]["levels"]), default=0)
    secs = r.get("master_to_configured_seconds")
    return (
        f"{label} -> used **{used}** | - | {secs if secs is not None else '?'} (run {wall:.0f}) | - | - | "
        f"{verdict(r['check'])} | {worst} | {('refused: ' + refused[0][:60]) if refused else 'accepted'}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", default="named:18-3-1-full")
    ap.add_argument("--percent", default="1,2,5", help="comma-separated percentages of switch links")
    ap.add_argument("--link", action="append", help="fail this link (NODE[PORT]) instead of a share")
    ap.add_argument("--switch", action="append", help="fail this switch instead of a share")
    ap.add_argument("--node", action="append", help="fail this compute node instead of a share")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-opensm", action="store_true")
    ap.add_argument("--roots", action="store_true", help="also run OpenSM's ftree with root/CN GUID files")
    ap.add_argument("--out", help="work directory")
    args = ap.parse_args()
    work = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="lanes-fail-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    net = str(work / "f.net")
    s = native.gen(spec_of(args.tree), net)
    print(f"bench: {s['topology']}: {s['nodes']} nodes, {s['switches']} switches", file=sys.stderr)
    named = {"links": args.link or [], "switches": args.switch or [], "nodes": args.node or []}
    cases: list[tuple[str, dict[str, Any]]] = (
        [(",".join(x for v in named.values() for x in v), named)]
        if any(named.values())
        else [
            (f"{p} %", {"random_link_percent": float(p), "seed": args.seed}) for p in args.percent.split(",")
        ]
    )
    print(
        "| failed | router | links failed | routing s | SMPs | old tables: up/down viol. / CDG / unreachable "
        "| new tables: up/down viol. / CDG / unreachable | max dest/port | note |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, case in cases:
        d = work / name.replace(" ", "").replace("%", "pct").replace("[", "_").replace("]", "")
        d.mkdir(parents=True, exist_ok=True)
        print(f"bench: {name}: lanes ...", file=sys.stderr)
        rows, degraded = lanes_rows(net, case, d)
        for r in rows:
            print(f"| {name} | {r} |", flush=True)
        if not args.no_opensm:
            print(f"bench: {name}: OpenSM ftree on the degraded tree ...", file=sys.stderr)
            print(f"| {name} | {opensm_row(degraded, d, False)} |", flush=True)
            if args.roots:
                print(f"| {name} | {opensm_row(degraded, d, True)} |", flush=True)
    print(json.dumps({"work": str(work)}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
