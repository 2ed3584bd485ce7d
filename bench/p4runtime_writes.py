"""P4Runtime table-write benchmark: N exact entries (p4rt_test's l2_fwd) written one per Write
RPC (single) and in batches, against a `lanes switch` started here on 127.0.0.1 without ports.
Reports writes/s and per-RPC write latency (p50, p99); deletes them again between runs.

    .venv/bin/python bench/p4runtime_writes.py [--entries 10000] [--batch 500] [--port 19561]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import grpc

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from lanes.p4runtime.client import Client
from lanes.p4runtime.p4info_file import load_p4info
from lanes.p4runtime.proto import p4r

L2_FWD, DST, SET_PORT, PORT = 33554435, 1, 16777219, 1


def entry(i: int) -> p4r.Update:
    u = p4r.Update(type=p4r.Update.INSERT)
    te = u.entity.table_entry
    te.table_id = L2_FWD
    te.match.add(field_id=DST).exact.value = (0x0200_0000_0000 + i).to_bytes(6, "big")
    te.action.action.action_id = SET_PORT
    te.action.action.params.add(param_id=PORT, value=bytes([1 + i % 4]))
    return u


def as_delete(u: p4r.Update) -> p4r.Update:
    d = p4r.Update(type=p4r.Update.DELETE)
    d.entity.table_entry.CopyFrom(u.entity.table_entry)
    d.entity.table_entry.ClearField("action")
    return d


def run(client: Client, updates: list, batch: int) -> dict:
    lat = []
    t0 = time.perf_counter()
    for s in range(0, len(updates), batch):
        t = time.perf_counter()
        client.write(updates[s : s + batch])
        lat.append(time.perf_counter() - t)
    dt = time.perf_counter() - t0
    lat.sort()
    return {
        "batch": batch,
        "entries": len(updates),
        "seconds": round(dt, 3),
        "writes_per_s": round(len(updates) / dt),
        "rpc_p50_ms": round(1e3 * statistics.median(lat), 3),
        "rpc_p99_ms": round(1e3 * lat[min(len(lat) - 1, int(0.99 * len(lat)))], 3),
        "per_entry_us": round(1e6 * dt / len(updates), 1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=10000)
    ap.add_argument("--batch", type=int, action="append", help="batch size(s) (default 100, 500, 1000)")
    ap.add_argument("--port", type=int, default=19561)
    a = ap.parse_args()
    batches = a.batch or [100, 500, 1000]
    addr = f"127.0.0.1:{a.port}"
    sw = subprocess.Popen(
        [str(REPO / ".venv/bin/lanes"), "switch", "--no-p4", "--thrift-port", str(a.port + 1),
         "--", "--grpc-server-addr", addr],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    client = Client(addr)
    try:
        grpc.channel_ready_future(client.channel).result(timeout=30)
        if client.arbitrate(1).status.code != 0:
            raise SystemExit("not primary")
        client.set_pipeline(
            load_p4info(REPO / "p4/p4rt_test.p4info.txtpb"), (REPO / "p4/p4rt_test.json").read_bytes()
        )
        updates = [entry(i) for i in range(a.entries)]
        deletes = [as_delete(u) for u in updates]
        results = []
        for b in [1, *batches]:
            print(f"p4runtime_writes: {a.entries} entries, batch {b} ...", file=sys.stderr, flush=True)
            r = run(client, updates, b)
            results.append(r)
            print(json.dumps(r), flush=True)
            run(client, deletes, 1000)
        n = len(client.read([p4r.Entity(table_entry=p4r.TableEntry(table_id=L2_FWD))]))
        assert n == 0, f"{n} entries left after the deletes"
    finally:
        client.close()
        sw.terminate()
        sw.wait(10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
