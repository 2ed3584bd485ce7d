"""OpenSM's SA under PathRecord load, on ibsim: 1, 2, 4, 8 clients (each its own CA, sa_load from
bench/sa) send PathRecord Get queries back to back; queries per second and latency per query
against the number of clients, and the saturation point. Then the burst a switch failure sets off
when every client asks again for every peer (no cache), measured, beside what the storm model
(`lanes fabric sa-storm`) predicts from the measured rate, and with the path-record cache.

    python bench/fabric_sa_load.py [--tree named:18-2-1-full] [--queries 4000] [--out DIR]

Everything (ibsim, OpenSM, the clients) shares this machine's cores: the rate is the simulated
subnet's, an upper bound set by the host, not a hardware SA's.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lanes.fabric import native, opensm
from lanes.fabric.live import LiveSubnet

SA_LOAD = Path(__file__).resolve().parents[1] / "build" / "bench" / "sa_load"


def spec_of(text: str) -> dict[str, Any]:
    kind, _, rest = text.partition(":")
    if kind == "kary":
        k, n = rest.split(":")
        return {"kind": "kary", "k": int(k), "n": int(n)}
    return {"kind": "named", "name": rest}


def clients(
    sub: LiveSubnet, hosts: list[str], lids: list[int], queries: int, timeout_ms: int, burst: bool = False
) -> dict[str, Any]:
    """Runs one sa_load per host at once; totals and the worst latencies."""
    procs = []
    t0 = time.monotonic()
    for i, h in enumerate(hosts):
        # Each client cycles through every LID, from its own offset.
        order = lids[i * 7 % len(lids) :] + lids[: i * 7 % len(lids)]
        procs.append(
            subprocess.Popen(
                [
                    str(SA_LOAD),
                    *(["--burst"] if burst else []),
                    str(queries),
                    str(timeout_ms),
                    *map(str, order),
                ],
                env=dict(sub.sim_env, SIM_HOST=h),
                cwd=sub.outdir,  # umad2sim's fake sysfs goes there
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    outs = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise SystemExit("sa_load did not finish within 300 s") from None
        if p.returncode != 0 or not out.strip():
            raise SystemExit(f"sa_load failed: {err.strip()[:200]}")
        outs.append(json.loads(out))
    wall = time.monotonic() - t0
    answered = sum(o["answered"] for o in outs)
    span = max(o["seconds"] for o in outs)
    return {
        "clients": len(hosts),
        "queries": sum(o["queries"] for o in outs),
        "answered": answered,
        "failed": sum(o["failed"] for o in outs),
        "seconds": span,
        "wall_seconds": wall,
        "rate": answered / span if span else 0.0,
        "p50_us": max(o["latency_us"]["p50"] for o in outs),
        "p99_us": max(o["latency_us"]["p99"] for o in outs),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", default="named:18-2-1-full")
    ap.add_argument("--queries", type=int, default=4000, help="queries per client")
    ap.add_argument("--timeout-ms", type=int, default=1000)
    ap.add_argument("--engine", default="ftree", help="OpenSM routing engine (ftree, lanes-ftree, ...)")
    ap.add_argument("--out", help="work directory")
    args = ap.parse_args()
    if not SA_LOAD.exists():
        print(f"{SA_LOAD} missing: run make setup", file=sys.stderr)
        return 1
    work = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="lanes-sa-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    net = str(work / "f.net")
    s = native.gen(spec_of(args.tree), net)
    print(f"bench: {s['topology']}: {s['nodes']} nodes", file=sys.stderr)
    result: dict[str, Any] = {"tree": s["topology"], "nodes": s["nodes"], "engine": args.engine, "load": []}
    with LiveSubnet(net, args.engine, str(work / "live"), sweep=10, dumps=True) as sub:
        by_name = opensm.parse_dump_lids(sub.outdir / "opensm-lfts.dump")
        lids = sorted(by_name.values())
        names = sorted(by_name, key=by_name.get)
        # Clients spread over the leaves.
        hosts = [names[(i * len(names)) // 8] for i in range(8)]
        print("| clients | PathRecords/s | p50 latency us | p99 latency us | failed |")
        print("|---|---|---|---|---|")
        for n in (1, 2, 4, 8):
            r = clients(sub, hosts[:n], lids, args.queries, args.timeout_ms)
            result["load"].append(r)
            print(
                f"| {n} | {r['rate']:.0f} | {r['p50_us']:.0f} | {r['p99_us']:.0f} | {r['failed']} |",
                flush=True,
            )
        # Open loop: each client keeps up to 32 queries in flight (sa_load --burst).
        print("| clients, 32 in flight each | PathRecords/s | p50 latency us | p99 latency us | failed |")
        print("|---|---|---|---|---|")
        result["open_loop"] = []
        for n in (1, 8):
            r = clients(sub, hosts[:n], lids, args.queries, args.timeout_ms, burst=True)
            result["open_loop"].append(r)
            print(
                f"| {n} | {r['rate']:.0f} | {r['p50_us']:.0f} | {r['p99_us']:.0f} | {r['failed']} |",
                flush=True,
            )
        closed_best = max(r["rate"] for r in result["load"])
        sat = next(r["clients"] for r in result["load"] if r["rate"] >= 0.9 * closed_best)
        best = max(r["rate"] for r in result["load"] + result["open_loop"])
        result["saturation"] = {"rate": best, "closed_loop_rate": closed_best, "closed_loop_clients": sat}
        # The burst without a cache: every client asks for every peer at once.
        burst = clients(sub, hosts, lids, len(lids), args.timeout_ms, burst=True)
        result["burst"] = burst
    model = native.sa_storm(
        {
            "peers": burst["queries"],
            "queries_per_peer": 1,
            "sa_rate": best,
            "timeout_s": args.timeout_ms / 1000,
            "retries": 0,
        }
    )
    result["model"] = model
    no_cache = next(r for r in model["rows"] if r["event"] == "switch failure" and not r["cache"])
    with_cache = next(r for r in model["rows"] if r["event"] == "switch failure" and r["cache"])
    print(
        f"\nsaturation: {best:.0f} PathRecords/s (closed loop: {closed_best:.0f} from {sat} clients on); "
        f"burst of {burst['queries']} queries "
        f"(8 clients x {len(lids)} peers, 32 in flight each, {args.timeout_ms} ms timeout, no resend): "
        f"measured {burst['seconds']:.2f} s, "
        f"{burst['failed']} timed out; model {no_cache['result']['seconds']:.2f} s, "
        f"{no_cache['result']['failed']} timed out; with the cache: {with_cache['result']['queries']} queries"
    )
    (work / "sa_load.json").write_text(json.dumps(result, indent=2))
    print(json.dumps({"work": str(work)}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
