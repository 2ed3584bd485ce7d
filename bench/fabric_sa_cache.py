"""The path-record cache against OpenSM's SA on ibsim: 8 clients (bench/sa/sa_cache.c, each on
its own CA) look up all peers, then the fabric changes (a spine switch fails and comes back, a leaf
switch fails and comes back, a node leaves and comes back, a node comes back under a new GUID and
so a new LID) and they look up all peers again after each change. Run once with the cache (clients
subscribed to OpenSM's GID in/out-of-service notices, traps 64 and 65, asking the SA only on a miss
or after a notice) and once
without (every lookup a query), each on a fresh subnet. Counted on OpenSM's side: the SA MADs it
received and sent (its console's counters) per round; on the clients' side: queries, failed
lookups, time to all answers; with the cache, every cached record is then compared with the SA's
answer.

    python bench/fabric_sa_cache.py [--tree named:18-2-1-full] [--out DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lanes.fabric import native, opensm
from lanes.fabric.live import LiveSubnet
from lanes.fabric.saclient import SaClients, totals

# The changes, applied in this order through ibsim's console; each is followed by a round of
# lookups. Names are 18-2-1-full's: spines s2-*, leaves s1-* (18 hosts each), hosts h-*; the
# clients sit on h-0, h-81, ..., h-567 (leaves s1-0 .. s1-31) and OpenSM on the first CA.
EVENTS: list[tuple[str, list[str]]] = [
    ("spine switch s2-5 fails", ["unlink s2-5"]),
    ("s2-5 comes back", ["relink s2-5"]),
    ("leaf switch s1-34 fails (18 hosts gone)", ["unlink s1-34"]),
    ("s1-34 comes back", ["relink s1-34"]),
    ("node h-640 leaves", ["unlink h-640"]),
    ("h-640 comes back", ["relink h-640"]),
    ("h-641 comes back under a new GUID (new LID)", ["unlink h-641", "guid h-641", "relink h-641"]),
]
NEW_GUID = 0x2C90000ABCDE0


def spec_of(text: str) -> dict[str, Any]:
    kind, _, rest = text.partition(":")
    if kind == "kary":
        k, n = rest.split(":")
        return {"kind": "kary", "k": int(k), "n": int(n)}
    return {"kind": "named", "name": rest}


def apply(sub: LiveSubnet, step: str) -> None:
    if step.startswith("guid "):
        # A new node GUID (the CA's port GUID follows it) while the node is away: OpenSM takes
        # it for a new port and gives it a new LID, as a VM that comes up on another vport.
        assert sub.ibsim is not None and sub.ibsim.stdin is not None
        sub.ibsim.stdin.write(f'Guid "{step.split()[1]}" {NEW_GUID:#x}\n'.encode())
        sub.ibsim.stdin.flush()
        return
    sub.apply(step)


def run(net: str, work: Path, cache: bool, settle_s: float) -> dict[str, Any]:
    rounds: list[dict[str, Any]] = []
    # -d 0: ignore_other_sm, as the clients sit on ports ibsim marks as SM ports (saclient.py).
    with LiveSubnet(net, "ftree", str(work), sweep=2, dumps=True, extra_args=["-d", "0"]) as sub:
        by_name = opensm.parse_dump_lids(sub.outdir / "opensm-lfts.dump")
        names = sorted(by_name, key=by_name.get)
        lids = [by_name[n] for n in names]
        hosts = [f"h-{(i * len(names)) // 8}" for i in range(8)]
        with SaClients(sub, hosts, lids, cache) as clients:

            def one_round(label: str, since: dict[str, int]) -> None:
                time.sleep(settle_s)  # Reports of the change reach the clients
                before = sub.sa_mads()
                answers = clients.round(label.replace(" ", "_"))
                after = sub.sa_mads()
                r = {
                    "event": label,
                    **totals(answers),
                    "sa_mads_received_by_opensm": after["received"] - before["received"],
                    "sa_mads_sent_by_opensm": after["sent"] - before["sent"],
                    # Between the change and the round: Reports sent, ReportResps received.
                    "notice_mads_received_by_opensm": before["received"] - since["received"],
                    "notice_mads_sent_by_opensm": before["sent"] - since["sent"],
                    "clients": answers,
                }
                if cache:
                    checks = clients.verify()
                    r["verify"] = {
                        k: sum(c[k] for c in checks)
                        for k in ("compared", "uncached", "sa_failed", "mismatched")
                    }
                rounds.append(r)
                print(
                    f"{'cache' if cache else 'no cache'}: {label}: OpenSM received "
                    f"{r['sa_mads_received_by_opensm']} SA MADs; clients sent {r['queries']} queries, "
                    f"{r['failed']} lookups failed, {r['seconds']:.3f} s"
                    + (f"; verify {r['verify']}" if cache else ""),
                    file=sys.stderr,
                    flush=True,
                )

            one_round("first lookup of every peer", sub.sa_mads())
            one_round("again, nothing changed", sub.sa_mads())
            for label, steps in EVENTS:
                since = sub.sa_mads()
                for step in steps:
                    apply(sub, step)
                if any(s.startswith("guid ") for s in steps):
                    now = opensm.parse_dump_lids(sub.outdir / "opensm-lfts.dump")
                    name = steps[0].split()[1]
                    clients.command(f"peer {by_name[name]} {now[name]}")
                one_round(label, since)
    return {"cache": cache, "clients": 8, "peers": len(lids), "rounds": rounds}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", default="named:18-2-1-full")
    ap.add_argument("--out", help="work directory")
    ap.add_argument("--json", help="write the result here")
    ap.add_argument("--settle", type=float, default=1.0, help="seconds between SUBNET UP and the round")
    args = ap.parse_args()
    work = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="lanes-sa-cache-"))
    work.mkdir(parents=True, exist_ok=True)
    net = str(work / "f.net")
    s = native.gen(spec_of(args.tree), net)
    result: dict[str, Any] = {
        "tree": s["topology"],
        "nodes": s["nodes"],
        "engine": "ftree",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "loadavg_start": os.getloadavg(),
        "runs": [],
    }
    for cache in (False, True):
        result["runs"].append(run(net, work / ("cache" if cache else "nocache"), cache, args.settle))
    result["loadavg_end"] = os.getloadavg()
    text = json.dumps(result, indent=1)
    if args.json:
        Path(args.json).write_text(text + "\n")
    no, yes = result["runs"]
    print(
        "| event | no cache: SA MADs at OpenSM / failed / s | cache: SA MADs at OpenSM / failed / s "
        "| cache: Reports OpenSM sent / answers it got | cache: hits / notices / dropped | cache = SA |"
    )
    print("|---|---|---|---|---|---|")
    for a, b in zip(no["rounds"], yes["rounds"], strict=True):
        v = b["verify"]
        same = f"{v['compared']} equal" if not v["mismatched"] else f"{v['mismatched']} DIFFER"
        if v["uncached"]:
            same += f", {v['uncached']} unknown to both"
        print(
            f"| {a['event']} | {a['sa_mads_received_by_opensm']} / {a['failed']} / {a['seconds']:.3f} "
            f"| {b['sa_mads_received_by_opensm']} / {b['failed']} / {b['seconds']:.3f} "
            f"| {b['notice_mads_sent_by_opensm']} / {b['notice_mads_received_by_opensm']} "
            f"| {b['hits']} / {b['notices']} / {b['invalidated']} | {same} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
