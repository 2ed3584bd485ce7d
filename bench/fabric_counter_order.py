"""Paper III's node order from port counters, end to end on ibsim: a 4-ary-3-tree, Paper III's example
inside pod 0 (flows b->e, c->i, d->m: h-1->h-4, h-2->h-8, h-3->h-12, 3/2/1 GiB) set as the hosts'
counters through ibsim's console and read back from every host with perfquery; the order (busiest
receiver first) re-routes the tenant's sub-tree with NoFTree. Prints the order, the up ports the
senders' leaf uses towards the receivers before and after, and the most flows on one link; writes
the raw results as JSON.

    python bench/fabric_counter_order.py [--out bench/results/fabric_counter_order.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from lanes.fabric import counterlive, counters, native
from lanes.fabric.dumproutes import links, route, tables

FLOWS = [("h-1", "h-4", 3 << 30), ("h-2", "h-8", 2 << 30), ("h-3", "h-12", 1 << 30)]
TENANT = ["h-1", "h-2", "h-3", "h-4", "h-8", "h-12"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="bench/results/fabric_counter_order.json")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lanes-counters-"))
    net, old, new = str(work / "t.net"), str(work / "old.dump"), str(work / "new.dump")
    native.gen({"kind": "kary", "k": 4, "n": 3}, net)
    hosts = counters.hosts_from_netlist(Path(net).read_text())
    lid_of = {name: lid for lid, name in hosts.items()}
    start = time.monotonic()
    text = counterlive.set_and_read(net, FLOWS, str(work / "sim"))
    read_seconds = time.monotonic() - start
    received = counters.received_bytes(counters.parse_perfquery(text), hosts)
    order = counters.order_by_received(received, hosts, 1 << 20)
    native.route(net, "ftree", old, {"check": False})
    r = native.route(net, "noftree", new, {"old": old, "subtree": TENANT, "order": order})
    net_links = links(net)
    result: dict = {
        "command": " ".join(["python", *sys.argv]),
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "tree": "4-ary-3 (64 nodes, 48 switches)",
        "flows": [{"src": s, "dst": d, "bytes": b} for s, d, b in FLOWS],
        "hosts_read": len(received),
        "idle_hosts_received_bytes": dict(Counter(v for v in received.values() if v < 1 << 20)),
        "ibsim_set_and_read_seconds": round(read_seconds, 2),
        "order": [{"node": n, "received_bytes": received[n]} for n in order],
        "subtree": r["extra"],
        "check": {k: r["check"][k] for k in ("deadlock_free", "unreachable")},
        "smps": native.diff(old, new)["blocks"],
    }
    for label, dump in (("ftree", old), ("noftree_subtree", new)):
        lfts = tables(dump)
        routes = {f"{s}->{d}": route(net_links, lfts, s, lid_of[d]) for s, d, _ in FLOWS}
        load = Counter(h for hops in routes.values() for h in hops)
        result[label] = {"routes": routes, "most_flows_on_one_link": max(load.values())}
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(
        f"order from perfquery ({len(received)} hosts read): "
        + ", ".join(f"{n} {received[n]} B" for n in order)
    )
    for label in ("ftree", "noftree_subtree"):
        x = result[label]
        print(f"{label}: most flows on one link {x['most_flows_on_one_link']}; routes {x['routes']}")
    print(f"raw: {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
